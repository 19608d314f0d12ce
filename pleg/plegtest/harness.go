package plegtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/suitekit"
	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
)

// caseSeq makes every case's instance ID unique within the process.
var caseSeq atomic.Int64

// harness is one case: a CRI manager with its own instance ID over the
// backend, the PLEG under test running on a cache, and what the suite saw.
type harness struct {
	tb    testing.TB
	d     *driver
	opts  Options
	image string
	out   Outside
	rt    noderuntime.Runtime
	cache *pleg.Cache
	plg   pleg.Interface
	clk   clock.WithTicker
	id    string

	// events are the events received so far.
	events []pleg.Event
	// mon checks every status the suite reads.
	mon *monitor
	// pods are the pods the case created, for the cleanup.
	pods []*corev1.Pod
}

// newHarness builds and starts a case's harness; its cleanup removes the
// case's pods and stops the PLEG.
func newHarness(tb testing.TB, b Backend, newPLEG Factory, opts Options) *harness {
	tb.Helper()
	var env RuntimeEnv
	var rs criapi.RuntimeService
	var is criapi.ImageManagerService
	if b.Runtime != nil {
		env = b.Runtime(tb)
	} else {
		rs, is, env.Clock = b.Open(tb)
		env.Outside, env.Events = rs, rs
	}
	clk := env.Clock
	h := &harness{tb: tb, d: newDriver(tb, clk), opts: opts, image: b.Image, out: env.Outside, clk: clk, mon: newMonitor()}
	if h.image == "" {
		h.image = "plegtest/busybox:1"
	}
	if h.opts.Within <= 0 {
		h.opts.Within = 15 * time.Second
		if h.d.fake != nil {
			h.opts.Within = 5 * time.Second
		}
	}
	h.id = fmt.Sprintf("plegtest-%d-%d", os.Getpid(), caseSeq.Add(1))
	log, dump := bufferedLog(clk)
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("logs of %s:\n%s", h.id, dump())
		}
	})
	h.rt = env.Runtime
	if b.Runtime == nil {
		dir := tb.TempDir()
		resolv := filepath.Join(dir, "resolv.conf")
		if err := os.WriteFile(resolv, []byte("nameserver 10.0.0.53\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
		h.rt = cri.NewManager(rs, is, clk, log, cri.Config{
			InstanceID: h.id, RootDir: filepath.Join(dir, "root"),
			PodLogsDir: filepath.Join(dir, "root", "logs"), ContainerLogsDir: filepath.Join(dir, "containers"),
			ResolvConf: resolv, CgroupParent: b.CgroupParent,
			InitialBackOff: 500 * time.Millisecond, MaxBackOff: 2 * time.Second,
		})
	}
	newCache := opts.newCache
	if newCache == nil {
		newCache = pleg.NewCache
	}
	h.cache = newCache(clk)
	h.plg = newPLEG(Env{Runtime: h.rt, Events: env.Events, Cache: h.cache, Clock: clk, Log: log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.plg.Run(ctx) }()
	tb.Cleanup(func() {
		h.removeAll()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("Run() = %v, want nil on a clean stop", err)
			}
		case <-time.After(realTimeLimit):
			tb.Errorf("the PLEG did not stop within %v of its context ending", realTimeLimit)
		}
	})
	h.d.settle()
	return h
}

// bufferedLog keeps logs in memory; dump returns them.
func bufferedLog(clk clock.Clock) (logr.Logger, func() string) {
	var mu sync.Mutex
	var b strings.Builder
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&b, "%s %s %s\n", clk.Now().Format("15:04:05.000"), prefix, args)
	}, funcr.Options{Verbosity: 4})
	return log, func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

// ctrSpec describes one container of a test pod.
type ctrSpec struct {
	name string
	// exitAfter, when set, makes the container exit that long after each
	// start with exitCode; otherwise it runs until stopped.
	exitAfter time.Duration
	exitCode  int
}

// newPod returns a pod of the case (restartPolicy Always) with the given
// containers, scripted both for the simulated runtime (annotations) and a
// real one (a shell that handles TERM).
func (h *harness) newPod(name string, ctrs ...ctrSpec) *corev1.Pod {
	grace := int64(1)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "plegtest", UID: types.UID(h.id + "-" + name), Annotations: map[string]string{},
		},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, RestartPolicy: corev1.RestartPolicyAlways},
	}
	for _, c := range ctrs {
		suitekit.AddContainer(p, c.name, h.image, c.exitAfter, c.exitCode)
	}
	h.pods = append(h.pods, p)
	return p
}

// ctx is the context of the suite's own runtime calls.
func (h *harness) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Minute)
}

// truth inspects the pod directly, bypassing the PLEG.
func (h *harness) truth(p *corev1.Pod) *noderuntime.PodStatus {
	h.tb.Helper()
	ctx, cancel := h.ctx()
	defer cancel()
	s, err := h.rt.GetPodStatus(ctx, p.UID, p.Name, p.Namespace)
	if err != nil {
		h.tb.Fatalf("inspect pod %s: %v", p.Name, err)
	}
	return s
}

// sync runs SyncPod for p with status and fails the case on an error other
// than a CrashLoopBackOff.
func (h *harness) sync(p *corev1.Pod, status *noderuntime.PodStatus) {
	h.tb.Helper()
	ctx, cancel := h.ctx()
	defer cancel()
	if err := h.rt.SyncPod(ctx, p, status).Error(); err != nil && !strings.Contains(err.Error(), noderuntime.ErrCrashLoopBackOff.Error()) {
		h.tb.Fatalf("sync pod %s: %v", p.Name, err)
	}
	h.d.settle()
}

// start makes the pod run, from a status read straight from the runtime,
// and returns the ID of its sandbox and of each container by name.
func (h *harness) start(p *corev1.Pod) (sandboxID string, containers map[string]string) {
	h.tb.Helper()
	h.sync(p, h.truth(p))
	s := h.truth(p)
	if len(s.SandboxStatuses) == 0 {
		h.tb.Fatalf("pod %s has no sandbox after SyncPod", p.Name)
	}
	containers = map[string]string{}
	for _, c := range s.ContainerStatuses {
		if _, ok := containers[c.Name]; !ok {
			containers[c.Name] = c.ID.ID
		}
	}
	if len(containers) != len(p.Spec.Containers) {
		h.tb.Fatalf("pod %s runs %d containers after SyncPod, want %d", p.Name, len(containers), len(p.Spec.Containers))
	}
	return s.SandboxStatuses[0].GetId(), containers
}

// removeAll kills and removes the case's pods.
func (h *harness) removeAll() {
	ctx, cancel := h.ctx()
	defer cancel()
	grace := int64(0)
	for _, p := range h.pods {
		s, err := h.rt.GetPodStatus(ctx, p.UID, p.Name, p.Namespace)
		if err == nil && (len(s.SandboxStatuses) > 0 || len(s.ContainerStatuses) > 0) {
			if err := h.rt.KillPod(ctx, p, s.ToPod(), &grace); err != nil {
				h.tb.Errorf("cleanup: kill pod %s: %v", p.Name, err)
			}
		}
	}
	if gc, ok := h.rt.(noderuntime.GarbageCollector); ok {
		ours := map[types.UID]bool{}
		for _, p := range h.pods {
			ours[p.UID] = true
		}
		if err := gc.GarbageCollect(ctx, func(uid types.UID) bool { return ours[uid] }); err != nil {
			h.tb.Errorf("cleanup: %v", err)
		}
	}
	h.d.settle()
}
