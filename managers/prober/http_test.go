package prober

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func port(t testing.TB, addr net.Addr) int {
	t.Helper()
	return addr.(*net.TCPAddr).Port
}

func newProbeServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "fine") })
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/broken", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://localhost:%d/ok", port(t, srv.Listener.Addr())), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ua=%s accept=%q x=%s host=%s", r.UserAgent(), r.Header.Values("Accept"), r.Header.Get("X-Probe"), r.Host)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, strings.Repeat("x", 20<<10)) })
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPProbe(t *testing.T) {
	t.Parallel()
	srv := newProbeServer(t)
	p := port(t, srv.Listener.Addr())
	closed := closedPort(t)
	ctr := &corev1.Container{Name: "app", Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: int32(p)}}}
	get := func(path string, mods ...func(*corev1.HTTPGetAction)) *corev1.HTTPGetAction {
		g := &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(int32(p))}
		for _, m := range mods {
			m(g)
		}
		return g
	}
	header := func(name, value string) func(*corev1.HTTPGetAction) {
		return func(g *corev1.HTTPGetAction) {
			g.HTTPHeaders = append(g.HTTPHeaders, corev1.HTTPHeader{Name: name, Value: value})
		}
	}
	cases := []struct {
		name    string
		get     *corev1.HTTPGetAction
		podIP   string
		want    outcome
		output  string // a prefix of the output
		wantErr bool
	}{
		{name: "a 200 succeeds with the body as output", get: get("/ok"), want: outcomeSuccess, output: "fine"},
		{name: "a 404 fails with the status code", get: get("/missing"), want: outcomeFailure, output: "HTTP probe failed with statuscode: 404"},
		{name: "a 500 fails", get: get("/broken"), want: outcomeFailure, output: "HTTP probe failed with statuscode: 500"},
		{name: "a redirect to the same host is followed", get: get("/here"), want: outcomeSuccess, output: "fine"},
		{name: "a redirect to another host is not followed and is a success with a warning", get: get("/away"), want: outcomeWarning, output: "Probe terminated redirects, Response body: <a href="},
		{name: "a redirect loop fails after 10 redirects", get: get("/loop"), want: outcomeFailure, output: `Get "/loop": stopped after 10 redirects`},
		{name: "the port may name a container port", get: get("/ok", func(g *corev1.HTTPGetAction) { g.Port = intstr.FromString("web") }), want: outcomeSuccess, output: "fine"},
		{name: "an unknown port name is an error", get: get("/ok", func(g *corev1.HTTPGetAction) { g.Port = intstr.FromString("nope") }), wantErr: true},
		{name: "a port out of range is an error", get: get("/ok", func(g *corev1.HTTPGetAction) { g.Port = intstr.FromInt32(70000) }), wantErr: true},
		{name: "the probe sends the kube-probe User-Agent, Accept */* and its headers", get: get("/headers", header("X-Probe", "yes")), want: outcomeSuccess, output: fmt.Sprintf(`ua=kube-probe/1.37 accept=["*/*"] x=yes host=127.0.0.1:%d`, p)},
		{name: "a User-Agent header replaces the default one", get: get("/headers", header("User-Agent", "mine")), want: outcomeSuccess, output: "ua=mine "},
		{name: "a Host header sets the request host", get: get("/headers", header("Host", "example.test")), want: outcomeSuccess, output: `ua=kube-probe/1.37 accept=["*/*"] x= host=example.test`},
		{name: "an empty Accept header sends none", get: get("/headers", header("Accept", "")), want: outcomeSuccess, output: "ua=kube-probe/1.37 accept=[] "},
		{name: "the scheme is not case sensitive", get: get("/ok", func(g *corev1.HTTPGetAction) { g.Scheme = "HTTP" }), want: outcomeSuccess, output: "fine"},
		{name: "the probe's host wins over the pod IP", get: get("/ok", func(g *corev1.HTTPGetAction) { g.Host = "127.0.0.1" }), podIP: "256.0.0.1", want: outcomeSuccess, output: "fine"},
		{name: "a closed port fails", get: get("/ok", func(g *corev1.HTTPGetAction) { g.Port = intstr.FromInt(closed) }), want: outcomeFailure, output: "Get "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			podIP := tc.podIP
			if podIP == "" {
				podIP = "127.0.0.1"
			}
			got, output, err := httpProbe(t, tc.get, ctr, podIP, 5*time.Second)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got != tc.want || !strings.HasPrefix(output, tc.output) {
				t.Errorf("outcome %d %q, want %d with prefix %q", got, output, tc.want, tc.output)
			}
		})
	}
}

func httpProbe(t *testing.T, get *corev1.HTTPGetAction, ctr *corev1.Container, podIP string, timeout time.Duration) (outcome, string, error) {
	t.Helper()
	req, err := newHTTPRequest(context.Background(), get, ctr, podIP, DefaultUserAgent)
	if err != nil {
		return outcomeUnknown, "", err
	}
	tr := newHTTPTransport()
	defer tr.CloseIdleConnections()
	return probeHTTP(tr, req, timeout)
}

func TestHTTPProbeCutsTheBodyTo10KiB(t *testing.T) {
	t.Parallel()
	srv := newProbeServer(t)
	get := &corev1.HTTPGetAction{Path: "/big", Port: intstr.FromInt(port(t, srv.Listener.Addr()))}
	got, output, err := httpProbe(t, get, &corev1.Container{}, "127.0.0.1", 5*time.Second)
	if err != nil || got != outcomeSuccess || len(output) != 10<<10 {
		t.Errorf("outcome %d, %d bytes, %v; want success with 10240 bytes", got, len(output), err)
	}
}

func TestHTTPSProbeSkipsCertificateVerification(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "secure") }))
	defer srv.Close()
	get := &corev1.HTTPGetAction{Scheme: corev1.URISchemeHTTPS, Port: intstr.FromInt(port(t, srv.Listener.Addr()))}
	got, output, err := httpProbe(t, get, &corev1.Container{}, "127.0.0.1", 5*time.Second)
	if err != nil || got != outcomeSuccess || output != "secure" {
		t.Errorf("outcome %d %q %v, want success \"secure\"", got, output, err)
	}
}

func TestHTTPProbeTimesOut(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	get := &corev1.HTTPGetAction{Port: intstr.FromInt(port(t, srv.Listener.Addr()))}
	start := time.Now()
	got, output, err := httpProbe(t, get, &corev1.Container{}, "127.0.0.1", 100*time.Millisecond)
	if err != nil || got != outcomeFailure || !strings.Contains(output, "Client.Timeout exceeded") {
		t.Errorf("outcome %d %q %v, want a failure on the client timeout", got, output, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the probe took %v with a 100ms timeout", d)
	}
}

// closedPort returns a local port nobody listens on.
func closedPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := port(t, l.Addr())
	_ = l.Close()
	return p
}
