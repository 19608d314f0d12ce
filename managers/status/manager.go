package status

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// StatusManager is the default Manager: a versioned cache of pod statuses
// and a loop that patches them into the API server. Build it with New.
type StatusManager struct {
	client   kubernetes.Interface
	pods     PodResolver
	deletion DeletionSafety
	clk      clock.WithTicker
	log      logr.Logger
	cfg      Config

	// signal wakes Run after a change; one pending signal stands for any
	// number of changes, so SetPodStatus never blocks.
	signal chan struct{}

	mu       sync.RWMutex
	statuses map[types.UID]*cachedStatus
	// seq numbers every status change, across pods, so that pending
	// statuses are written oldest first.
	seq uint64

	// Owned by Run's goroutine: the version last written per API UID (the
	// mirror pod's UID for a static pod), and the pods to look at again.
	apiVersions map[types.UID]uint64
	retries     map[types.UID]retry
	// unreachable is set when a request failed without an answer from the
	// API server (no status came back), and cleared by the next answer.
	unreachable bool
}

// cachedStatus is one pod's newest status. It is replaced, never mutated,
// so the sync loop may read it without the lock.
type cachedStatus struct {
	version uint64
	// seq orders this change among every pod's changes.
	seq          uint64
	status       *corev1.PodStatus
	podName      string
	podNamespace string
	// deleted is set once the manager deleted the pod from the API server.
	deleted bool
}

// retry is when to look at a pod again, and the delay that led there.
type retry struct {
	at    time.Time
	delay time.Duration
}

var _ Manager = (*StatusManager)(nil)

// New returns a StatusManager. client may be nil: the manager then only
// keeps statuses in memory (standalone mode, no API server). pods may be
// nil: each status then goes to the pod it was set for, by name, and drift
// is not detected. deletion may be nil: the manager then never deletes
// pods. New does no I/O and starts nothing: Run does.
func New(client kubernetes.Interface, pods PodResolver, deletion DeletionSafety, clk clock.WithTicker, log logr.Logger, cfg Config) *StatusManager {
	return &StatusManager{
		client:      client,
		pods:        pods,
		deletion:    deletion,
		clk:         clk,
		log:         log.WithName("status"),
		cfg:         cfg,
		signal:      make(chan struct{}, 1),
		statuses:    map[types.UID]*cachedStatus{},
		apiVersions: map[types.UID]uint64{},
		retries:     map[types.UID]retry{},
	}
}

// SetPodStatus implements Manager. A status equal to the cached one (after
// transition and start times are carried over and times cut to the second)
// changes nothing; a pod in a terminal phase keeps it.
func (m *StatusManager) SetPodStatus(pod *corev1.Pod, status *corev1.PodStatus) {
	if pod == nil || status == nil {
		return
	}
	next := status.DeepCopy()
	m.mu.Lock()
	defer m.mu.Unlock()
	cached, ok := m.statuses[pod.UID]
	old := &pod.Status
	if ok {
		old = cached.status
	}
	prepare(old, next, &pod.Spec, m.clk.Now())
	if ok && apiequality.Semantic.DeepEqual(cached.status, next) {
		m.log.V(6).Info("Pod status unchanged", "pod", klog.KObj(pod), "podUID", pod.UID)
		return
	}
	m.seq++
	entry := &cachedStatus{version: 1, seq: m.seq, status: next, podName: pod.Name, podNamespace: pod.Namespace}
	if ok {
		entry.version = cached.version + 1
		entry.deleted = cached.deleted
	}
	m.statuses[pod.UID] = entry
	m.log.V(2).Info("Pod status changed", "pod", klog.KObj(pod), "podUID", pod.UID, "phase", next.Phase, "version", entry.version)
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// GetPodStatus implements Manager.
func (m *StatusManager) GetPodStatus(uid types.UID) (*corev1.PodStatus, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if c, ok := m.statuses[uid]; ok {
		return c.status, true
	}
	return nil, false
}

// RemovePodStatus implements Manager.
func (m *StatusManager) RemovePodStatus(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.statuses, uid)
}

// Run implements Manager: it writes changed statuses as soon as they are
// set, retries failed writes per pod with backoff from 100ms to 10s, and
// every Config.SyncPeriod checks every cached status (see the package doc).
// It returns nil when ctx ends, or an error at once if the Config is
// invalid.
func (m *StatusManager) Run(ctx context.Context) error {
	if err := m.cfg.Validate(); err != nil {
		return err
	}
	if m.client == nil {
		m.log.Info("No API server client: pod statuses stay in memory")
		<-ctx.Done()
		return nil
	}
	cfg := m.cfg.withDefaults()
	m.log.Info("Starting pod status manager", "syncPeriod", cfg.SyncPeriod)
	ticker := m.clk.NewTicker(cfg.SyncPeriod)
	defer ticker.Stop()
	var timer clock.Timer
	var fire <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.signal:
			m.syncBatch(ctx, false)
		case <-fire:
			timer, fire = nil, nil
			m.syncBatch(ctx, false)
		case <-ticker.C():
			m.syncBatch(ctx, true)
		}
		if timer != nil {
			timer.Stop()
			timer, fire = nil, nil
		}
		if at, ok := m.nextRetry(); ok {
			timer = m.clk.NewTimer(max(at.Sub(m.clk.Now()), 0))
			fire = timer.C()
		}
	}
}

// nextRetry returns the earliest time a pod is to be looked at again.
func (m *StatusManager) nextRetry() (time.Time, bool) {
	var first time.Time
	for _, r := range m.retries {
		if first.IsZero() || r.at.Before(first) {
			first = r.at
		}
	}
	return first, !first.IsZero()
}

// backoff schedules another look at the pod, later each time.
func (m *StatusManager) backoff(uid types.UID) {
	m.backoffAfter(uid, nil)
}

// backoffAfter schedules another look at the pod after a failed request
// (err may be nil: no request failed) and notes whether the API server
// answered at all.
func (m *StatusManager) backoffAfter(uid types.UID, err error) {
	if err != nil && !answered(err) {
		m.unreachable = true
	}
	r := m.retries[uid]
	r.delay = min(max(2*r.delay, minRetry), maxRetry)
	r.at = m.clk.Now().Add(r.delay)
	m.retries[uid] = r
}

// reachable records that the API server answered. If it had not answered
// before, every pod backing off is due at once: the statuses written while
// it was away go out now, in the order they were set, not each after its
// own backoff.
func (m *StatusManager) reachable() {
	if !m.unreachable {
		return
	}
	m.unreachable = false
	now := m.clk.Now()
	for uid := range m.retries {
		m.retries[uid] = retry{at: now}
	}
	if len(m.retries) > 0 {
		m.log.Info("API server answers again; writing the pending pod statuses oldest first", "pods", len(m.retries))
	}
}

// answered reports whether err came from the API server (a Status), not
// from failing to reach it.
func answered(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// snapshot returns the cached statuses; the entries are immutable.
func (m *StatusManager) snapshot() map[types.UID]*cachedStatus {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[types.UID]*cachedStatus, len(m.statuses))
	for uid, c := range m.statuses {
		out[uid] = c
	}
	return out
}

// markDeleted records that the pod left the API server, unless its entry
// was removed meanwhile.
func (m *StatusManager) markDeleted(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.statuses[uid]; ok {
		copied := *c
		copied.deleted = true
		m.statuses[uid] = &copied
	}
}
