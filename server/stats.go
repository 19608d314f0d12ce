package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodekit/nodekit/managers/stats"
)

// StatsProvider is what the stats routes read (stats.SummaryProvider;
// every stats.Provider is one).
// It must be safe for concurrent use; it may block for as long as the
// request's context allows.
type StatsProvider interface {
	// Summary returns the node's and its pods' stats; with
	// onlyCPUAndMemory only their CPU and memory.
	Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error)
}

// ServeStats adds the stats routes to the server's handler:
//
//	/stats/summary     the stats/v1alpha1 Summary in JSON;
//	                   ?only_cpu_and_memory=true reads only CPU and memory
//	/metrics/resource  the kubelet's resource metrics (node, pod and
//	                   container CPU and memory, container start times,
//	                   scrape_error and resource_scrape_error), each
//	                   request reading p afresh into a registry of its own
//	/metrics/cadvisor  cadvisor's container_* and machine_* metrics, when p
//	                   is a stats.CadvisorSource
//
// Call it before serving (nodekit's composition does); it is safe to call
// once per Server. A nil p adds nothing.
func (s *Server) ServeStats(p StatsProvider) {
	if p == nil {
		return
	}
	registerStats(s.mux, p, s.log)
}

// ServeStats adds the stats routes (see Server.ServeStats) to the secure
// port, where they need the nodes/stats (/stats/*) and nodes/metrics
// (/metrics/*) rights. Call it before Run or Serve. A nil p adds nothing.
func (s *SecureServer) ServeStats(p StatsProvider) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = p
}

// registerStats adds the stats routes to the secure port's mux when
// ServeStats gave a provider.
func (s *SecureServer) registerStats(mux router) {
	s.mu.Lock()
	p := s.stats
	s.mu.Unlock()
	if p != nil {
		registerStats(mux, p, s.log)
	}
}

// registerStats adds the stats routes to mux.
func registerStats(mux router, p StatsProvider, log logr.Logger) {
	mux.HandleFunc("GET /stats/summary", func(w http.ResponseWriter, r *http.Request) {
		serveSummary(w, r, p, log)
	})
	mux.HandleFunc("GET /metrics/resource", func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewRegistry()
		if err := reg.Register(stats.ReadResourceMetrics(r.Context(), p)); err != nil {
			http.Error(w, fmt.Sprintf("register resource metrics: %v", err), http.StatusInternalServerError)
			return
		}
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
	registerCadvisor(mux, p)
}

// serveSummary answers /stats/summary as the kubelet does: the parameter
// only_cpu_and_memory, given once, is parsed as a bool (a value that does
// not parse means false).
func serveSummary(w http.ResponseWriter, r *http.Request, p StatsProvider, log logr.Logger) {
	only := false
	if v, ok := r.URL.Query()["only_cpu_and_memory"]; ok && len(v) == 1 {
		only, _ = strconv.ParseBool(v[0])
	}
	summary, err := p.Summary(r.Context(), only)
	if err != nil {
		log.Error(err, "cannot read stats summary", "onlyCPUAndMemory", only)
		http.Error(w, fmt.Sprintf("stats summary: %v", err), http.StatusInternalServerError)
		return
	}
	body, err := json.Marshal(summary)
	if err != nil {
		http.Error(w, fmt.Sprintf("encode stats summary: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
