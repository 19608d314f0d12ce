package nodekit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/internal/atomicref"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/managers/images"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/managers/stats"
	"github.com/nodekit/nodekit/podworkers"
)

// evictionWiring binds the eviction manager's small interfaces to the
// agent (pods, dead containers), the pod workers, the stats provider and
// the image GC, and hands
// the manager to the node status (pressure conditions) and to admission.
func evictionWiring() fx.Option {
	return fx.Options(
		fx.Provide(
			func(p stats.Provider) eviction.StatsReader { return p },
			func(a *agent.Agent, w podworkers.Workers) eviction.PodLister { return activePods{a, w} },
			func(w podworkers.Workers, c Config) eviction.PodKiller {
				return workerKiller{w: w, evict: true, rootDir: c.RootDir, poll: cleanupPoll, wait: evictionWait}
			},
			func(a *agent.Agent) eviction.ContainerGC { return a },
			reclaimer,
			pressureSource,
			func() *pressureRef { return &pressureRef{} },
		),
		fx.Invoke(connectPressure),
	)
}

type reclaimerParams struct {
	fx.In

	Images images.Manager `optional:"true"`
}

// reclaimer is the image GC, or none when it was left out.
func reclaimer(p reclaimerParams) eviction.Reclaimer {
	if p.Images == nil {
		return nil
	}
	return p.Images
}

type pressureParams struct {
	fx.In

	Eviction eviction.Manager `optional:"true"`
	Config   Config
}

// pressureSource makes the eviction manager the source of the node
// status's pressure conditions (not with the simulated runtime, whose
// stats are made up and where it does not run); nil without one.
func pressureSource(p pressureParams) nodestatus.PressureSource {
	if !p.active() {
		return nil
	}
	return p.Eviction
}

// active reports whether there is an eviction manager that runs.
func (p pressureParams) active() bool {
	return p.Eviction != nil && !isNil(p.Eviction) && p.Config.Runtime != RuntimeSim
}

// connectPressure closes a real dependency cycle: admission under
// pressure (the agent, through NodeResources) needs the eviction manager,
// which needs the agent's pods. The agent gets an empty pressureRef at
// construction and this fills it once the app is built; until then, and
// without an eviction manager that runs, pods are admitted.
func connectPressure(ref *pressureRef, p pressureParams) {
	if p.active() {
		ref.Store(p.Eviction)
	}
}

// pressureRef is the eviction manager, set once the app is built.
type pressureRef struct {
	atomicref.Ref[eviction.Manager]
}

// admit is eviction.Admit under the manager's conditions; it admits
// without a manager.
func (r *pressureRef) admit(pod *corev1.Pod) (string, string, bool) {
	if r == nil {
		return "", "", true
	}
	m, ok := r.Load()
	if !ok {
		return "", "", true
	}
	return eviction.Admit(pod, m.Conditions())
}

// activePods are the agent's pods whose termination was not requested
// and that are not in a terminal phase.
type activePods struct {
	a *agent.Agent
	w podworkers.Workers
}

func (p activePods) ActivePods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range p.a.GetPods() {
		if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded || p.w.IsPodTerminationRequested(pod.UID) {
			continue
		}
		out = append(out, pod)
	}
	return out
}

// evictionWait bounds how long an eviction waits for the pod to stop and
// be cleaned up, as the kubelet's pod cleanup timeout.
const evictionWait = 30 * time.Second

// cleanupPoll is how often an eviction checks the pod's cleanup, as the
// kubelet's podCleanupPollFreq.
const cleanupPoll = time.Second

// workerKiller kills pods through the pod workers, with a status
// override: evictions (evict, which lets the pod's content go once it
// stopped; bounded by wait, and waiting for the pod's cleanup) and the node
// shutdown (not an eviction, as the kubelet's; bounded by ctx only, wait 0).
type workerKiller struct {
	w     podworkers.Workers
	evict bool
	// rootDir holds the pods' directories; poll and wait are cleanupPoll
	// and evictionWait for evictions.
	rootDir    string
	poll, wait time.Duration
}

// KillPod terminates the pod; for an eviction it then, as the kubelet's
// eviction manager waits for the evicted pod's cleanup before its next
// pass, waits until
// its volumes are torn down (<RootDir>/pods/<uid>/volumes gone: an
// emptyDir's space or a tmpfs's memory is free again), all within
// evictionWait.
func (k workerKiller) KillPod(ctx context.Context, pod *corev1.Pod, grace int64, status func(*corev1.PodStatus)) error {
	done := make(chan struct{})
	k.w.UpdatePod(podworkers.UpdatePodOptions{
		UpdateType: podworkers.SyncPodKill, Pod: pod,
		KillPodOptions: &podworkers.KillPodOptions{CompletedCh: done, Evict: k.evict, PodStatusFunc: status,
			PodTerminationGracePeriodSecondsOverride: &grace},
	})
	var timeout <-chan time.Time // nil: ctx only
	if k.wait > 0 {
		t := time.NewTimer(k.wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil
	case <-timeout:
		return nil
	}
	if !k.evict {
		return nil
	}
	volumes := filepath.Join(k.rootDir, "pods", string(pod.UID), "volumes")
	poll := time.NewTicker(k.poll)
	defer poll.Stop()
	for {
		if _, err := os.Stat(volumes); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		select {
		case <-poll.C:
		case <-ctx.Done():
			return nil
		case <-timeout:
			return nil
		}
	}
}
