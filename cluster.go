package nodekit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/internal/atomicref"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/managers/status"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/sources"
	"github.com/nodekit/nodekit/sources/apiserver"
)

// kubeClient returns the Kubernetes client when a kubeconfig is configured
// (with the credentials of kubeCredentials), and nil otherwise: then the agent runs its static pods alone. An API
// server that does not answer does not fail start-up: static pods must run
// without it, and the agent reconciles when it comes.
func kubeClient(creds apiCredentials) (kubernetes.Interface, error) {
	if creds.rc == nil {
		return nil, nil
	}
	return kubernetes.NewForConfig(creds.rc)
}

// apiSource returns the API server pod source when a client exists, and
// nil otherwise.
func apiSource(client kubernetes.Interface, cfg Config, clk clock.WithTicker, log logr.Logger) *apiserver.Source {
	if client == nil {
		return nil
	}
	return apiserver.New(client, clk, log, cfg.APISource)
}

// clusterSources returns the API server pod source when there is one.
func clusterSources(src *apiserver.Source) []sources.Source {
	if src == nil {
		return nil
	}
	return []sources.Source{src}
}

// mirrorClient adapts the status manager's mirror client; nil without an
// API server.
func mirrorClient(m status.MirrorClient) agent.MirrorClient {
	if m == nil {
		return nil
	}
	if c, ok := m.(*status.APIMirrorClient); ok && c == nil {
		return nil
	}
	return m
}

// deletionSafety tells the status manager that a deleted pod's containers
// are gone: its worker has terminated. It closes a real dependency cycle:
// the status manager takes it at construction, and the pod workers it
// asks depend on the status manager (through the agent's syncer), so
// connectDeletionSafety fills it once the app is built. Until then no pod
// counts as reclaimed.
type deletionSafety struct {
	workers atomicref.Ref[podworkers.Workers]
}

// PodResourcesAreReclaimed implements status.DeletionSafety.
func (d *deletionSafety) PodResourcesAreReclaimed(pod *corev1.Pod, _ *corev1.PodStatus) bool {
	w, ok := d.workers.Load()
	return ok && w.IsPodKnownTerminated(pod.UID)
}

// connectDeletionSafety gives deletionSafety the pod workers (see there).
func connectDeletionSafety(d *deletionSafety, w podworkers.Workers) {
	d.workers.Store(w)
}

// agentHealth reports the agent's health checks as the node's readiness,
// and tells the node status when the runtime check changes its verdict.
type agentHealth struct{ a *agent.Agent }

var _ nodestatus.HealthNotifier = agentHealth{}

// HealthChanged implements nodestatus.HealthNotifier.
func (h agentHealth) HealthChanged() <-chan struct{} { return h.a.HealthChanged() }

// Ready implements nodestatus.HealthSource: nil when every check passes
// and the runtime's pod network is ready (the kubelet's Ready condition
// holds its network errors after its runtime errors).
func (h agentHealth) Ready() error {
	var failed []string
	var errs []error
	for _, c := range h.a.HealthChecks() {
		if err := c.Check(); err != nil {
			failed = append(failed, c.Name())
			errs = append(errs, fmt.Errorf("%s: %w", c.Name(), err))
		}
	}
	network := h.a.NetworkReady()
	switch {
	case len(errs) == 0:
		return network
	case network != nil:
		return fmt.Errorf("unhealthy: %s: %w, %w", strings.Join(failed, ", "), errors.Join(errs...), network)
	}
	return fmt.Errorf("unhealthy: %s: %w", strings.Join(failed, ", "), errors.Join(errs...))
}
