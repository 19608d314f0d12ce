package nodestatus

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/atomicref"
	"github.com/nodekit/nodekit/managers/nodeip"
)

// Registration backoff, as the kubelet's registerWithAPIServer: 100ms
// doubling to 7s.
const (
	registerInitialBackoff = 100 * time.Millisecond
	registerMaxBackoff     = 7 * time.Second
	// nodeStatusUpdateRetry is how many times one status sync tries to post.
	nodeStatusUpdateRetry = 5
	// runtimeVersionTimeout bounds the Version call of each status sync: a
	// hung runtime must not keep the Ready condition from being posted.
	runtimeVersionTimeout = 2 * time.Second
)

// event names a point in Run that tests wait for.
type event int

const (
	// eventBackoff: a registration failed and its backoff timer is set.
	eventBackoff event = iota
	// eventSynced: one status sync ended; the update ticker is set.
	eventSynced
)

// Reporter is the default Manager: it registers the node, posts its status
// when it changes or every StatusReportFrequency, and runs the upstream
// lease controller for the node's Lease in kube-node-lease. It uses only
// what a node's own credentials allow (get, create, update and patch of its
// own Node and Lease), never a list.
type Reporter struct {
	client  kubernetes.Interface
	machine MachineInfo
	rt      RuntimeInfo
	health  HealthSource
	clk     clock.WithTicker
	log     logr.Logger
	cfg     Config

	mu      sync.Mutex
	node    *corev1.Node  // last returned by the API server
	nodeIPs nodeip.Source // nil: Config.NodeIP, else Machine.HostIP

	// Owned by Run's goroutine.
	registered     bool
	lastReport     time.Time
	runtimeVersion string
	hook           func(event) // tests only; nil otherwise
	pressure       atomicref.Ref[PressureSource]
	gate           atomicref.Ref[ReadyGate]
}

var _ Manager = (*Reporter)(nil)

// New returns a Reporter. It does no I/O; Run validates cfg and does the
// work. All arguments are required.
func New(client kubernetes.Interface, machine MachineInfo, rt RuntimeInfo, health HealthSource, clk clock.WithTicker, log logr.Logger, cfg Config) *Reporter {
	return &Reporter{
		client:  client,
		machine: machine,
		rt:      rt,
		health:  health,
		clk:     clk,
		log:     log.WithName("nodestatus"),
		cfg:     cfg.withDefaults(),
	}
}

// SetNodeIPs makes the Reporter post src's addresses as the node's
// InternalIP addresses, instead of Config.NodeIP or Machine.HostIP, so
// that the Node shows the addresses the pods report as their hostIP. While
// src knows no address, the addresses the Node has are kept. Call it
// before Run; it is safe for concurrent use.
func (r *Reporter) SetNodeIPs(src nodeip.Source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodeIPs = src
}

// Run registers the node (retrying with backoff), then renews its Lease
// and posts its status every StatusUpdateFrequency, at once when a
// HealthSource that is a HealthNotifier signals a change, and, until the
// node is first posted Ready, as soon as the agent is ready (checked every
// 100 ms for up to 2 minutes, as the kubelet does), until ctx ends. It
// returns nil when ctx ends and an error only when the Config is invalid.
// It blocks; call it once.
func (r *Reporter) Run(ctx context.Context) error {
	if err := r.cfg.Validate(); err != nil {
		return err
	}
	r.log.Info("starting", "node", r.cfg.NodeName, "statusUpdateFrequency", r.cfg.StatusUpdateFrequency,
		"leaseDuration", r.cfg.LeaseDuration)
	if !r.registerWithBackoff(ctx) {
		return nil
	}
	ticker := r.clk.NewTicker(r.cfg.StatusUpdateFrequency)
	defer ticker.Stop()

	var wg sync.WaitGroup
	defer wg.Wait()
	leaseCtx := klog.NewContext(ctx, r.log.WithName("lease"))
	wg.Go(func() { r.newLeaseController().Run(leaseCtx) })

	var changed <-chan struct{} // nil: never
	if n, ok := r.health.(HealthNotifier); ok {
		changed = n.HealthChanged()
	}
	gateChanged := r.gateChanged()
	// The fast checks start before the first post (a ready agent ends them
	// right after it), so a readiness change after that post is never
	// missed.
	fast := r.startFastUpdates()
	defer fast.stop()
	r.syncStatus(ctx)
	if r.postedReady() {
		fast.stop()
	}
	for {
		select {
		case <-ctx.Done():
			r.log.Info("stopping", "node", r.cfg.NodeName)
			return nil
		case <-ticker.C():
			r.syncStatus(ctx)
		case <-changed:
			r.log.V(2).Info("agent health changed; updating node status now", "node", r.cfg.NodeName)
			r.syncStatus(ctx)
		case <-gateChanged:
			r.log.V(2).Info("readiness gate changed; updating node status now", "node", r.cfg.NodeName)
			r.syncStatus(ctx)
		case <-fast.c:
			if !r.fastUpdateDue(fast) {
				continue
			}
			r.log.V(2).Info("agent ready; updating node status now", "node", r.cfg.NodeName)
			r.syncStatus(ctx)
		}
		if fast.c != nil && r.postedReady() {
			fast.stop()
		}
	}
}

// Node returns a copy of the Node the API server last returned, or nil.
func (r *Reporter) Node() *corev1.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.node.DeepCopy()
}

func (r *Reporter) setNode(n *corev1.Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.node = n
}

func (r *Reporter) notify(e event) {
	if r.hook != nil {
		r.hook(e)
	}
}

// registerWithBackoff tries to register until it succeeds (true) or ctx
// ends (false).
func (r *Reporter) registerWithBackoff(ctx context.Context) bool {
	backoff := registerInitialBackoff
	for {
		err := r.register(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		r.log.Error(err, "cannot register node; will retry", "node", r.cfg.NodeName, "backoff", backoff)
		t := r.clk.NewTimer(backoff)
		r.notify(eventBackoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
		backoff = min(2*backoff, registerMaxBackoff)
	}
}

// syncStatus registers the node again if it was deleted, then posts its
// status if it changed or is due. Errors are logged: the next tick retries.
func (r *Reporter) syncStatus(ctx context.Context) {
	defer r.notify(eventSynced)
	if !r.registered {
		if err := r.register(ctx); err != nil {
			r.log.Error(err, "cannot register node; will retry", "node", r.cfg.NodeName)
			return
		}
	}
	if err := r.updateStatus(ctx, r.gather(ctx)); err != nil && ctx.Err() == nil {
		r.log.Error(err, "cannot update node status", "node", r.cfg.NodeName)
	}
}

// gather reads the machine, the runtime and the agent's health once. A
// read that fails (a runtime that does not answer within
// runtimeVersionTimeout included) is logged and leaves the fields it fills
// unchanged.
func (r *Reporter) gather(ctx context.Context) inputs {
	in := inputs{now: metav1.NewTime(r.clk.Now()), health: r.health.Ready(), gate: r.gateNow(),
		pressure: r.pressureConditionsNow()}
	if m, err := r.machine.Info(); err != nil {
		r.log.Error(err, "cannot read machine info")
	} else {
		in.machine = m
	}
	if u, err := r.machine.Usage(); err != nil {
		r.log.Error(err, "cannot read machine usage")
	} else {
		in.usage = u
	}
	r.mu.Lock()
	src := r.nodeIPs
	r.mu.Unlock()
	if src != nil {
		in.nodeIPs.set = true
		in.nodeIPs.ips, in.nodeIPs.err = src.NodeIPs()
	}
	if in.health == nil || r.runtimeVersion == "" {
		r.readRuntimeVersion(ctx)
	}
	in.runtimeVersion = r.runtimeVersion
	return in
}

// readRuntimeVersion asks the runtime its version, within
// runtimeVersionTimeout. gather skips it while the agent is unhealthy and a
// version is known: the runtime may be what hangs, and the Ready condition
// must not wait for it.
func (r *Reporter) readRuntimeVersion(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, runtimeVersionTimeout)
	defer cancel()
	if v, err := r.rt.Version(ctx); err != nil {
		r.log.Error(err, "cannot read container runtime version")
	} else if v != nil {
		r.runtimeVersion = v.String()
	}
}
