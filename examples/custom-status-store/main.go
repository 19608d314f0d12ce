package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
)

// PhaseHistory is an agent.StatusStore that keeps, for each pod, the phases
// it went through, and hands every call on to Next.
type PhaseHistory struct {
	// Next is the store the statuses go to (nodekit's status manager).
	Next agent.StatusStore

	mu     sync.Mutex
	phases map[types.UID][]corev1.PodPhase
}

// SetPodStatus implements agent.StatusStore: it notes a new phase in
// memory, never blocking, then hands the status on.
func (h *PhaseHistory) SetPodStatus(pod *corev1.Pod, status *corev1.PodStatus) {
	h.mu.Lock()
	if h.phases == nil {
		h.phases = map[types.UID][]corev1.PodPhase{}
	}
	if list := h.phases[pod.UID]; status != nil && (len(list) == 0 || list[len(list)-1] != status.Phase) {
		h.phases[pod.UID] = append(list, status.Phase)
	}
	h.mu.Unlock()
	h.Next.SetPodStatus(pod, status)
}

// GetPodStatus implements agent.StatusStore.
func (h *PhaseHistory) GetPodStatus(uid types.UID) (*corev1.PodStatus, bool) {
	return h.Next.GetPodStatus(uid)
}

// RemovePodStatus implements agent.StatusStore; the history is forgotten
// with the pod.
func (h *PhaseHistory) RemovePodStatus(uid types.UID) {
	h.mu.Lock()
	delete(h.phases, uid)
	h.mu.Unlock()
	h.Next.RemovePodStatus(uid)
}

// History returns the phases the pod went through, oldest first.
func (h *PhaseHistory) History(uid types.UID) []corev1.PodPhase {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]corev1.PodPhase(nil), h.phases[uid]...)
}

// ServeHTTP serves every pod's history as JSON, keyed by UID.
func (h *PhaseHistory) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	body, err := json.Marshal(h.phases)
	h.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// Module decorates the agent's status store with a PhaseHistory and
// provides the PhaseHistory itself.
func Module() fx.Option {
	h := &PhaseHistory{}
	return fx.Options(
		fx.Decorate(func(next agent.StatusStore) agent.StatusStore { h.Next = next; return h }),
		fx.Supply(h),
	)
}

func main() {
	cfg := nodekit.DefaultConfig()
	addr := flag.String("history-addr", "127.0.0.1:8099", "address that serves the phase history")
	flag.StringVar(&cfg.Manifests, "manifests", "", "directory of static pod manifests")
	flag.StringVar(&cfg.Runtime, "runtime", nodekit.RuntimeSim, "cri or sim")
	flag.StringVar(&cfg.RuntimeEndpoint, "runtime-endpoint", "", "CRI endpoint")
	flag.StringVar(&cfg.RootDir, "root-dir", cfg.RootDir, "root directory")
	flag.Parse()
	var history *PhaseHistory
	app := nodekit.New(cfg, textlogger.NewLogger(textlogger.NewConfig()), nodekit.Defaults(), Module(), fx.Populate(&history))
	if err := app.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "custom-status-store:", err)
		os.Exit(1)
	}
	go func() { _ = http.ListenAndServe(*addr, history) }()
	<-app.Done()
	if err := app.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "custom-status-store:", err)
		os.Exit(1)
	}
}
