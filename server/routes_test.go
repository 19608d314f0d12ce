package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// recordingMux is an http.ServeMux that remembers the patterns registered
// on it, so a test can enumerate the routes.
type recordingMux struct {
	*http.ServeMux
	patterns []string
}

func (m *recordingMux) Handle(p string, h http.Handler) {
	m.patterns = append(m.patterns, p)
	m.ServeMux.Handle(p, h)
}

func (m *recordingMux) HandleFunc(p string, f func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, p)
	m.ServeMux.HandleFunc(p, f)
}

type noStats struct{}

func (noStats) Summary(context.Context, bool) (*statsapi.Summary, error) {
	return nil, errors.New("no stats")
}

// everyRoute is a secure server with every optional route turned on,
// and the patterns it registers.
func everyRoute(t *testing.T) (*recordingMux, *SecureServer) {
	t.Helper()
	s := NewSecure(SecureDeps{Pods: podsFixed{}, Gatherer: prometheus.NewRegistry(), Configz: map[string]string{},
		Verbosity: func(string) (string, error) { return "ok", nil }}, logr.Discard(), Config{SystemLogDir: t.TempDir()})
	s.ServeStats(noStats{})
	mux := &recordingMux{ServeMux: http.NewServeMux()}
	s.register(mux)
	return mux, s
}

// recordingAuthz denies everything and records what it was asked, or
// fails with err.
type recordingAuthz struct {
	mu    sync.Mutex
	asked []authorizer.Attributes
	err   error
	allow string // a subresource to allow
}

func (a *recordingAuthz) Authorize(_ context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, attr)
	if a.err != nil {
		return authorizer.DecisionNoOpinion, "", a.err
	}
	if attr.GetSubresource() == a.allow {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// fixedAuthn authenticates every request as user, or fails.
type fixedAuthn struct {
	user string
	ok   bool
	err  error
}

func (f fixedAuthn) AuthenticateRequest(*http.Request) (*authenticator.Response, bool, error) {
	if f.err != nil || !f.ok {
		return nil, false, f.err
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: f.user}}, true, nil
}

// TestEveryRouteHasAnAuthorizationCase is the kubelet's server_test
// authorization table: each route the secure port serves, the request
// that reaches it, and the verb and node subresources it is authorized
// against. A route added without a case here fails the test.
func TestEveryRouteHasAnAuthorizationCase(t *testing.T) {
	type tc struct {
		method, path string
		verb         string
		subresources []string
	}
	proxy := []string{"proxy"}
	cases := map[string][]tc{
		"GET /pods":             {{"GET", "/pods", "get", []string{"pods", "proxy"}}},
		"GET /healthz":          {{"GET", "/healthz", "get", []string{"healthz", "proxy"}}},
		"GET /healthz/{name}":   {{"GET", "/healthz/syncloop", "get", []string{"healthz", "proxy"}}},
		"GET /metrics":          {{"GET", "/metrics", "get", []string{"metrics"}}},
		"GET /metrics/probes":   {{"GET", "/metrics/probes", "get", []string{"metrics"}}},
		"GET /metrics/resource": {{"GET", "/metrics/resource", "get", []string{"metrics"}}},
		"GET /stats/summary":    {{"GET", "/stats/summary", "get", []string{"stats"}}},
		"GET /runningpods/":     {{"GET", "/runningpods/", "get", []string{"pods", "proxy"}}},
		"GET /configz":          {{"GET", "/configz", "get", []string{"configz", "proxy"}}},
		pprofPath:               {{"GET", "/debug/pprof/heap", "get", proxy}, {"POST", "/debug/pprof/symbol", "create", proxy}},
		logsPath:                {{"GET", "/logs/syslog", "get", []string{"log"}}},
		debugFlagPath:           {{"PUT", "/debug/flags/v", "update", proxy}},
		"GET /containerLogs/{namespace}/{pod}/{container}": {{"GET", "/containerLogs/ns/p/c", "get", proxy}},
		"POST /run/{namespace}/{pod}/{container}":          {{"POST", "/run/ns/p/c", "create", proxy}},
		"POST /run/{namespace}/{pod}/{uid}/{container}":    {{"POST", "/run/ns/p/u/c", "create", proxy}},
	}
	for _, m := range []string{"GET", "POST"} {
		verb := map[string]string{"GET": "get", "POST": "create"}[m]
		cases[m+" /exec/{namespace}/{pod}/{container}"] = []tc{{m, "/exec/ns/p/c", verb, proxy}}
		cases[m+" /exec/{namespace}/{pod}/{uid}/{container}"] = []tc{{m, "/exec/ns/p/u/c", verb, proxy}}
		cases[m+" /attach/{namespace}/{pod}/{container}"] = []tc{{m, "/attach/ns/p/c", verb, proxy}}
		cases[m+" /attach/{namespace}/{pod}/{uid}/{container}"] = []tc{{m, "/attach/ns/p/u/c", verb, proxy}}
		cases[m+" /portForward/{namespace}/{pod}"] = []tc{{m, "/portForward/ns/p", verb, proxy}}
		cases[m+" /portForward/{namespace}/{pod}/{uid}"] = []tc{{m, "/portForward/ns/p/u", verb, proxy}}
	}

	mux, _ := everyRoute(t)
	for _, p := range mux.patterns {
		if _, ok := cases[p]; !ok {
			t.Errorf("route %q has no authorization case: add one to this table", p)
		}
	}
	for pattern, tcs := range cases {
		if !slices.Contains(mux.patterns, pattern) {
			t.Errorf("case %q names no route the secure port serves", pattern)
			continue
		}
		for _, c := range tcs {
			req := httptest.NewRequest(c.method, c.path, nil)
			if _, got := mux.Handler(req); got != pattern {
				t.Errorf("%s %s reaches %q, want %q", c.method, c.path, got, pattern)
			}
			authz := &recordingAuthz{}
			a := &nodeAuth{authn: fixedAuthn{user: "u", ok: true}, authz: authorizer.AuthorizerFunc(authz.Authorize), nodeName: "node-1", log: logr.Discard()}
			rec := httptest.NewRecorder()
			a.filter(mux).ServeHTTP(rec, req)
			if rec.Code != http.StatusForbidden {
				t.Errorf("%s %s denied: %d, want 403", c.method, c.path, rec.Code)
			}
			var subs []string
			for _, at := range authz.asked {
				subs = append(subs, at.GetSubresource())
				if at.GetVerb() != c.verb || at.GetResource() != "nodes" || at.GetName() != "node-1" || at.GetPath() != c.path {
					t.Errorf("%s %s asked %s nodes/%s %s (path %s), want %s nodes/node-1", c.method, c.path, at.GetVerb(),
						at.GetName(), at.GetSubresource(), at.GetPath(), c.verb)
				}
			}
			if !reflect.DeepEqual(subs, c.subresources) {
				t.Errorf("%s %s asked subresources %v, want %v", c.method, c.path, subs, c.subresources)
			}
		}
	}
}

func TestAuthFilterAnswersAsTheKubelet(t *testing.T) {
	t.Parallel()
	mux, _ := everyRoute(t)
	tests := []struct {
		name     string
		authn    fixedAuthn
		authz    *recordingAuthz
		wantCode int
		wantBody string
	}{
		{"no credentials: 401", fixedAuthn{}, &recordingAuthz{}, http.StatusUnauthorized, "Unauthorized"},
		{"the authenticator fails: 401", fixedAuthn{err: errors.New("TokenReview: connection refused")}, &recordingAuthz{},
			http.StatusUnauthorized, "Unauthorized"},
		{"the authorizer fails: 500 naming the request", fixedAuthn{user: "alice", ok: true},
			&recordingAuthz{err: errors.New("SubjectAccessReview: connection refused")}, http.StatusInternalServerError,
			"Authorization error (user=alice, verb=get, resource=nodes, subresource=healthz)"},
		{"denied: 403 naming every subresource", fixedAuthn{user: "alice", ok: true}, &recordingAuthz{}, http.StatusForbidden,
			"Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[healthz proxy])"},
		{"allowed through the fallback subresource", fixedAuthn{user: "alice", ok: true}, &recordingAuthz{allow: "proxy"}, http.StatusOK, "ok"},
	}
	for _, tt := range tests {
		a := &nodeAuth{authn: tt.authn, authz: authorizer.AuthorizerFunc(tt.authz.Authorize), nodeName: "node-1", log: logr.Discard()}
		rec := httptest.NewRecorder()
		a.filter(mux).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if rec.Code != tt.wantCode || !strings.Contains(rec.Body.String(), tt.wantBody) {
			t.Errorf("%s: got %d %q, want %d with %q", tt.name, rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
		}
		if !tt.authn.ok && len(tt.authz.asked) > 0 {
			t.Errorf("%s: an unauthenticated request was authorized", tt.name)
		}
	}
}
