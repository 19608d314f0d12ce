package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodekit/nodekit/server"
)

// fakeStats answers Summary with a fixed summary or error and records
// what it was asked.
type fakeStats struct {
	summary *statsapi.Summary
	err     error
	asked   []bool
}

func (f *fakeStats) Summary(_ context.Context, only bool) (*statsapi.Summary, error) {
	f.asked = append(f.asked, only)
	return f.summary, f.err
}

func getStats(t *testing.T, h http.Handler, path string) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, rec.Header().Get("Content-Type"), string(body)
}

func TestStatsRoutes(t *testing.T) {
	t.Parallel()
	one := uint64(1)
	p := &fakeStats{summary: &statsapi.Summary{
		Node: statsapi.NodeStats{NodeName: "n1", CPU: &statsapi.CPUStats{UsageCoreNanoSeconds: &one}},
		Pods: []statsapi.PodStats{{PodRef: statsapi.PodReference{Name: "web", Namespace: "ns"}}},
	}}
	s := server.New(nil, nil, nil, logr.Discard(), server.Config{})
	if code, _, _ := getStats(t, s.Handler(), "/stats/summary"); code != http.StatusNotFound {
		t.Errorf("/stats/summary before ServeStats: %d, want 404", code)
	}
	s.ServeStats(p)

	tests := []struct {
		path     string
		wantOnly bool
	}{
		{"/stats/summary", false},
		{"/stats/summary?only_cpu_and_memory=true", true},
		{"/stats/summary?only_cpu_and_memory=1", true},
		{"/stats/summary?only_cpu_and_memory=bogus", false},
		{"/stats/summary?only_cpu_and_memory=true&only_cpu_and_memory=true", false},
	}
	for _, tt := range tests {
		p.asked = nil
		code, ctype, body := getStats(t, s.Handler(), tt.path)
		var got statsapi.Summary
		if err := json.Unmarshal([]byte(body), &got); err != nil || code != http.StatusOK || ctype != "application/json" {
			t.Fatalf("%s: %d %q %v", tt.path, code, ctype, err)
		}
		if got.Node.NodeName != "n1" || len(got.Pods) != 1 || len(p.asked) != 1 || p.asked[0] != tt.wantOnly {
			t.Errorf("%s: summary %+v, asked %v; want only=%v", tt.path, got, p.asked, tt.wantOnly)
		}
	}

	p.asked = nil
	code, _, body := getStats(t, s.Handler(), "/metrics/resource")
	if code != http.StatusOK || !strings.Contains(body, "node_cpu_usage_seconds_total 1e-09 ") ||
		!strings.Contains(body, "resource_scrape_error 0") || len(p.asked) != 1 || !p.asked[0] {
		t.Errorf("/metrics/resource: %d, asked %v:\n%s", code, p.asked, body)
	}

	p.err = errors.New("runtime down")
	if code, _, body := getStats(t, s.Handler(), "/stats/summary"); code != http.StatusInternalServerError || !strings.Contains(body, "runtime down") {
		t.Errorf("/stats/summary with a failing provider: %d %q, want 500 naming the error", code, body)
	}
	if code, _, body := getStats(t, s.Handler(), "/metrics/resource"); code != http.StatusOK || !strings.Contains(body, "scrape_error 1") {
		t.Errorf("/metrics/resource with a failing provider: %d\n%s", code, body)
	}
}
