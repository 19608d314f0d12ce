package server

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nodekit/nodekit/managers/stats"
)

// registerCadvisor adds /metrics/cadvisor when p also gives cadvisor's
// metrics (stats.CadvisorSource; the CRI stats provider does): each
// request reads p afresh into a registry of its own. A provider that does
// not leaves the route out (404). On the secure port it is under /metrics,
// so it needs the nodes/metrics right, as in the kubelet.
func registerCadvisor(mux router, p StatsProvider) {
	src, ok := p.(stats.CadvisorSource)
	if !ok {
		return
	}
	mux.HandleFunc("GET /metrics/cadvisor", func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewRegistry()
		if err := reg.Register(src.ReadCadvisorMetrics(r.Context())); err != nil {
			http.Error(w, fmt.Sprintf("register cadvisor metrics: %v", err), http.StatusInternalServerError)
			return
		}
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
}
