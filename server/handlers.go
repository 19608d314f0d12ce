package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// handlers holds what the routes read.
type handlers struct {
	pods   PodLister
	checks []HealthCheck
	log    logr.Logger
	// includeRuntime keeps the check named RuntimeCheckName in the
	// aggregate /healthz.
	includeRuntime bool
}

// RuntimeCheckName and PLEGCheckName name the health checks that the
// aggregate /healthz leaves out unless Config.HealthzIncludeRuntime is set.
const (
	RuntimeCheckName = "runtime"
	PLEGCheckName    = "pleg"
)

// newHandler builds the routes. Patterns with a method also answer HEAD, and
// the mux answers 405 to other methods on a known path and 404 elsewhere.
func newHandler(pods PodLister, checks []HealthCheck, gatherer prometheus.Gatherer, log logr.Logger, includeRuntime bool) *http.ServeMux {
	h := &handlers{pods: pods, checks: checks, log: log, includeRuntime: includeRuntime}
	mux := http.NewServeMux()
	h.register(mux, gatherer)
	return mux
}

// register adds the routes both servers serve.
func (h *handlers) register(mux router, gatherer prometheus.Gatherer) {
	if h.pods != nil {
		mux.HandleFunc("GET /pods", h.servePods)
	}
	mux.HandleFunc("GET /healthz", h.serveHealthz)
	mux.HandleFunc("GET /healthz/{name}", h.serveHealthCheck)
	if gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	}
}

// servePods writes the pods as a v1 PodList.
func (h *handlers) servePods(w http.ResponseWriter, _ *http.Request) {
	pods := h.pods.GetPods()
	list := corev1.PodList{
		TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		Items:    make([]corev1.Pod, 0, len(pods)),
	}
	for _, p := range pods {
		if p == nil {
			continue
		}
		// A shallow copy is enough: encoding only reads the pod.
		list.Items = append(list.Items, *p)
	}
	body, err := json.Marshal(&list)
	if err != nil {
		h.log.Error(err, "cannot encode pods", "count", len(pods))
		http.Error(w, fmt.Sprintf("encode pods: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// serveHealthz runs every check but, unless includeRuntime, the ones named
// RuntimeCheckName and PLEGCheckName (the kubelet's /healthz does not fail
// for the runtime or the PLEG: they go into the node's Ready condition).
// With all passing it answers "ok" (or, with
// ?verbose, one line per check and "healthz check passed"); otherwise 500
// with one line per check and "healthz check failed".
func (h *handlers) serveHealthz(w http.ResponseWriter, r *http.Request) {
	var out strings.Builder
	var failed []string
	for _, c := range h.checks {
		if (c.Name() == RuntimeCheckName || c.Name() == PLEGCheckName) && !h.includeRuntime {
			continue
		}
		if err := c.Check(); err != nil {
			failed = append(failed, c.Name())
			fmt.Fprintf(&out, "[-]%s failed: %v\n", c.Name(), err)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.Name())
	}
	if len(failed) > 0 {
		h.log.V(2).Info("healthz check failed", "failedChecks", failed)
		out.WriteString("healthz check failed\n")
		writeText(w, http.StatusInternalServerError, out.String())
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		out.WriteString("healthz check passed\n")
		writeText(w, http.StatusOK, out.String())
		return
	}
	writeText(w, http.StatusOK, "ok")
}

// serveHealthCheck runs the checks with the name in the path: "ok" when they
// pass, 500 naming the failure otherwise, 404 when no check has the name.
func (h *handlers) serveHealthCheck(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	found := false
	for _, c := range h.checks {
		if c.Name() != name {
			continue
		}
		found = true
		if err := c.Check(); err != nil {
			h.log.V(2).Info("health check failed", "check", name, "err", err.Error())
			writeText(w, http.StatusInternalServerError,
				fmt.Sprintf("[-]%s failed: %v\nhealthz check failed\n", name, err))
			return
		}
	}
	if !found {
		http.Error(w, fmt.Sprintf("no health check named %q", name), http.StatusNotFound)
		return
	}
	writeText(w, http.StatusOK, "ok")
}

// writeText writes a plain-text response.
func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}
