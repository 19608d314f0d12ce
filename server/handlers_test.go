package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/server"
)

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

func runningPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7"},
	}
}

func TestPodsIsAPodListWithStatus(t *testing.T) {
	t.Parallel()
	pods := podList{runningPod("web"), nil, runningPod("db")}
	h := server.New(pods, nil, nil, logr.Discard(), server.Config{}).Handler()

	rec := get(t, h, http.MethodGet, "/pods")
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if string(raw["metadata"]) != "{}" {
		t.Errorf("metadata = %s, want {}", raw["metadata"])
	}
	var list corev1.PodList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatalf("body is not a PodList: %v", err)
	}
	if list.Kind != "PodList" || list.APIVersion != "v1" {
		t.Errorf("kind/apiVersion = %q/%q, want PodList/v1", list.Kind, list.APIVersion)
	}
	if len(list.Items) != 2 {
		t.Fatalf("got %d items, want 2 (nil pods skipped)", len(list.Items))
	}
	got := list.Items[1]
	if got.Name != "db" || got.Status.Phase != corev1.PodRunning || got.Status.PodIP != "10.0.0.7" {
		t.Errorf("item 1 = %s phase %s ip %s, want db Running 10.0.0.7", got.Name, got.Status.Phase, got.Status.PodIP)
	}
}

func TestPodsWithNoPodsIsAnEmptyList(t *testing.T) {
	t.Parallel()
	h := server.New(podList(nil), nil, nil, logr.Discard(), server.Config{}).Handler()
	rec := get(t, h, http.MethodGet, "/pods")
	if !strings.Contains(rec.Body.String(), `"items":[]`) {
		t.Errorf("body %s does not hold an empty items array", rec.Body)
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		checks   []server.HealthCheck
		cfg      server.Config
		path     string
		wantCode int
		wantBody string
	}{
		{
			name:     "no checks is healthy",
			path:     "/healthz",
			wantCode: http.StatusOK,
			wantBody: "ok",
		},
		{
			name:     "all checks passing answers ok",
			checks:   []server.HealthCheck{check{name: "syncloop"}, check{name: "pleg"}},
			path:     "/healthz",
			wantCode: http.StatusOK,
			wantBody: "ok",
		},
		{
			name:     "verbose lists every passing check",
			checks:   []server.HealthCheck{check{name: "syncloop"}, check{name: "pleg"}},
			path:     "/healthz?verbose",
			wantCode: http.StatusOK,
			wantBody: "[+]syncloop ok\n[+]pleg ok\nhealthz check passed\n",
		},
		{
			name: "a failing check is named with its reason",
			checks: []server.HealthCheck{
				check{name: "syncloop"},
				failing("pleg", "pleg was last seen active 3m1s ago"),
				failing("runtime", "container runtime is down"),
			},
			path:     "/healthz",
			wantCode: http.StatusInternalServerError,
			wantBody: "[+]syncloop ok\n" +
				"[-]pleg failed: pleg was last seen active 3m1s ago\n" +
				"healthz check failed\n",
		},
		{
			name:     "a failing runtime check leaves the aggregate healthy, as the kubelet's",
			checks:   []server.HealthCheck{check{name: "syncloop"}, failing("runtime", "container runtime is down")},
			path:     "/healthz?verbose",
			wantCode: http.StatusOK,
			wantBody: "[+]syncloop ok\nhealthz check passed\n",
		},
		{
			name:     "the runtime check keeps its own route",
			checks:   []server.HealthCheck{check{name: "syncloop"}, failing("runtime", "container runtime is down")},
			path:     "/healthz/runtime",
			wantCode: http.StatusInternalServerError,
			wantBody: "[-]runtime failed: container runtime is down\nhealthz check failed\n",
		},
		{
			name:     "with HealthzIncludeRuntime a failing runtime check fails the aggregate",
			checks:   []server.HealthCheck{check{name: "syncloop"}, failing("runtime", "container runtime is down")},
			cfg:      server.Config{HealthzIncludeRuntime: true},
			path:     "/healthz",
			wantCode: http.StatusInternalServerError,
			wantBody: "[+]syncloop ok\n[-]runtime failed: container runtime is down\nhealthz check failed\n",
		},
		{
			name:     "a single passing check answers ok",
			checks:   []server.HealthCheck{check{name: "syncloop"}, failing("pleg", "stuck")},
			path:     "/healthz/syncloop",
			wantCode: http.StatusOK,
			wantBody: "ok",
		},
		{
			name:     "a single failing check names its reason",
			checks:   []server.HealthCheck{check{name: "syncloop"}, failing("pleg", "stuck")},
			path:     "/healthz/pleg",
			wantCode: http.StatusInternalServerError,
			wantBody: "[-]pleg failed: stuck\nhealthz check failed\n",
		},
		{
			name:     "an unknown check is not found",
			checks:   []server.HealthCheck{check{name: "syncloop"}},
			path:     "/healthz/nosuch",
			wantCode: http.StatusNotFound,
			wantBody: "no health check named \"nosuch\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := server.New(podList(nil), tt.checks, nil, logr.Discard(), tt.cfg).Handler()
			rec := get(t, h, http.MethodGet, tt.path)
			if rec.Code != tt.wantCode {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantCode)
			}
			if rec.Body.String() != tt.wantBody {
				t.Errorf("body = %q, want %q", rec.Body.String(), tt.wantBody)
			}
		})
	}
}

func TestMetricsExposesTheGatherer(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "nodekit_test_events_total", Help: "Test events."})
	reg.MustRegister(c)
	c.Add(3)
	h := server.New(podList(nil), nil, reg, logr.Discard(), server.Config{}).Handler()

	rec := get(t, h, http.MethodGet, "/metrics")
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200", rec.Code)
	}
	if !strings.Contains(rec.Body.String(), "nodekit_test_events_total 3") {
		t.Errorf("metrics do not hold the test counter:\n%s", rec.Body)
	}
}

func TestRouting(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	withAll := server.New(podList(nil), nil, reg, logr.Discard(), server.Config{}).Handler()
	withNothing := server.New(nil, nil, nil, logr.Discard(), server.Config{}).Handler()
	tests := []struct {
		name     string
		handler  http.Handler
		method   string
		path     string
		wantCode int
	}{
		{"HEAD is served like GET", withAll, http.MethodHead, "/healthz", http.StatusOK},
		{"POST to pods is not allowed", withAll, http.MethodPost, "/pods", http.StatusMethodNotAllowed},
		{"DELETE to healthz is not allowed", withAll, http.MethodDelete, "/healthz", http.StatusMethodNotAllowed},
		{"PUT to a single check is not allowed", withAll, http.MethodPut, "/healthz/pleg", http.StatusMethodNotAllowed},
		{"POST to metrics is not allowed", withAll, http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
		{"an unknown path is not found", withAll, http.MethodGet, "/runningpods/", http.StatusNotFound},
		{"the root is not found", withAll, http.MethodGet, "/", http.StatusNotFound},
		{"a sub-path of pods is not found", withAll, http.MethodGet, "/pods/web", http.StatusNotFound},
		{"metrics without a gatherer is not found", withNothing, http.MethodGet, "/metrics", http.StatusNotFound},
		{"pods without a lister is not found", withNothing, http.MethodGet, "/pods", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := get(t, tt.handler, tt.method, tt.path)
			if rec.Code != tt.wantCode {
				t.Errorf("%s %s = %d, want %d", tt.method, tt.path, rec.Code, tt.wantCode)
			}
			if tt.wantCode == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "" {
				t.Errorf("405 without an Allow header")
			}
		})
	}
}
