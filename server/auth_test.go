package server

import (
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestSubresourcesForFollowTheKubeletMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want []string
	}{
		{"/stats/summary", []string{"stats"}},
		{"/stats", []string{"stats"}},
		{"/metrics", []string{"metrics"}},
		{"/metrics/resource", []string{"metrics"}},
		{"/metrics/probes", []string{"metrics"}},
		{"/logs/messages", []string{"log"}},
		{"/pods", []string{"pods", "proxy"}},
		{"/runningpods/", []string{"pods", "proxy"}},
		{"/healthz", []string{"healthz", "proxy"}},
		{"/healthz/runtime", []string{"healthz", "proxy"}},
		{"/configz", []string{"configz", "proxy"}},
		{"/containerLogs/ns/pod/c", []string{"proxy"}},
		{"/exec/ns/pod/c", []string{"proxy"}},
		{"/attach/ns/pod/c", []string{"proxy"}},
		{"/portForward/ns/pod", []string{"proxy"}},
		{"/run/ns/pod/c", []string{"proxy"}},
		{"/debug/pprof/heap", []string{"proxy"}},
		{"/spec/", []string{"proxy"}},
		{"/statsfoo", []string{"proxy"}},
		{"/podsx", []string{"proxy"}},
	}
	for _, tt := range tests {
		if got := subresourcesFor(tt.path); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("subresourcesFor(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestVerbForMapsTheHTTPMethod(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]string{
		"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete", "HEAD": "", "OPTIONS": "",
	} {
		if got := verbFor(method); got != want {
			t.Errorf("verbFor(%s) = %q, want %q", method, got, want)
		}
	}
}

func TestAttributesNameTheNode(t *testing.T) {
	t.Parallel()
	a := &nodeAuth{nodeName: "node-1"}
	attrs := a.attributes(nil, httptest.NewRequest("POST", "/exec/ns/pod/c?command=ls", nil))
	if len(attrs) != 1 {
		t.Fatalf("got %d attribute sets, want 1", len(attrs))
	}
	at := attrs[0]
	if at.GetVerb() != "create" || at.GetResource() != "nodes" || at.GetSubresource() != "proxy" || at.GetName() != "node-1" ||
		at.GetAPIVersion() != "v1" || at.GetAPIGroup() != "" || !at.IsResourceRequest() || at.GetPath() != "/exec/ns/pod/c" {
		t.Errorf("attributes = %+v", at)
	}
}

func TestProbeMetricsAreTheProbersOnly(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "prober_probe_total"}),
		prometheus.NewCounter(prometheus.CounterOpts{Name: "kubelet_pleg_relist_total"}))
	mfs, err := prefixGatherer{reg, "prober_"}.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetName() != "prober_probe_total" {
		t.Errorf("probe metrics = %v (err %v), want prober_probe_total only", mfs, err)
	}
}

func TestHTTPServersUseTheKubeletsTimeouts(t *testing.T) {
	t.Parallel()
	s := Config{}.withDefaults().httpServer(nil)
	if s.IdleTimeout != 90*time.Second || s.ReadTimeout != 4*time.Hour || s.WriteTimeout != 4*time.Hour ||
		s.ReadHeaderTimeout != 10*time.Second || s.MaxHeaderBytes != 1<<20 {
		t.Errorf("server timeouts idle %v read %v write %v header %v max header %d", s.IdleTimeout, s.ReadTimeout,
			s.WriteTimeout, s.ReadHeaderTimeout, s.MaxHeaderBytes)
	}
}
