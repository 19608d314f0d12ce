package volumes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/mount"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// EventFailedMount is the reason of the Warning event of a volume that
// failed to set up, as the kubelet's.
const EventFailedMount = "FailedMount"

var (
	_ Manager                  = (*VolumeManager)(nil)
	_ noderuntime.VolumeHolder = (*VolumeManager)(nil)
)

// VolumeManager is the default Manager: the kubelet's volume plugins for
// emptyDir, hostPath, configMap, secret, downwardAPI and projected volumes
// (service-account tokens included), on the local file system.
type VolumeManager struct {
	objects ObjectGetter  // nil: configMap and secret sources fail
	tokens  TokenGetter   // nil: serviceAccountToken sources fail
	node    NodeResources // nil: unset limits have no default
	rec     EventRecorder
	metrics *metrics
	clk     clock.WithTicker
	log     logr.Logger
	cfg     Config

	// backOff delays the retries of each failed (pod, volume); it has
	// its own lock.
	backOff *flowcontrol.Backoff
	// tmpfs mounts a tmpfs of a size on a directory unless one is there:
	// mount.EnsureTmpfs (tests replace it).
	tmpfs func(dir string, size int64) error
	// tmpfsMounted tells cheaply whether a tmpfs is mounted on a
	// directory: mount.IsTmpfsMountPoint (tests replace it).
	tmpfsMounted func(dir string) bool

	mu   sync.Mutex
	pods map[types.UID]*podState
	// offline keeps copies of the objects of checkpointed pods; nil
	// without (SetOfflineStore).
	offline OfflineStore
}

// podState is what the manager knows of one pod. mu serializes set-ups of
// the pod; the fields below it are guarded by VolumeManager.mu.
type podState struct {
	mu sync.Mutex

	pod     *corev1.Pod
	volumes map[string]noderuntime.Volume
	// lastErr is each failed volume's last error, reported while it waits
	// out its backoff.
	lastErr map[string]error
	// offlineLogged holds the "<volume>/<what>" offline fallbacks already
	// logged, so that each is logged once.
	offlineLogged map[string]bool
}

// New returns a VolumeManager; its metrics (the kubelet's
// storage_operation_duration_seconds and volume_manager_total_volumes) go
// on reg. objects, tokens, node, rec and reg may be nil: a
// configMap or secret volume then fails with an error saying there is no
// API server, a token likewise, limits have no node default, and events go
// to the log. The manager does not register pods with objects: whoever
// holds the desired pods does (the agent's Registry, as the kubelet's pod
// manager does), so that each pod has one owner. It does no I/O.
func New(objects ObjectGetter, tokens TokenGetter, node NodeResources, rec EventRecorder, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg Config) *VolumeManager {
	cfg = cfg.withDefaults()
	log = log.WithName("volumes")
	if rec == nil {
		rec = noderuntime.LogRecorder{Log: log}
	}
	return &VolumeManager{
		objects: objects, tokens: tokens, node: node, rec: rec, clk: clk, log: log, cfg: cfg,
		metrics: newMetrics(reg),
		backOff: flowcontrol.NewFakeBackOff(cfg.InitialBackOff, cfg.MaxBackOff, clk),
		tmpfs:   mount.EnsureTmpfs,

		tmpfsMounted: mount.IsTmpfsMountPoint,
		pods:         map[types.UID]*podState{},
	}
}

// PodVolumes implements runtime.VolumeGetter.
func (m *VolumeManager) PodVolumes(uid types.UID) map[string]noderuntime.Volume {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.pods[uid]
	if st == nil {
		return map[string]noderuntime.Volume{}
	}
	out := make(map[string]noderuntime.Volume, len(st.volumes))
	for k, v := range st.volumes {
		out[k] = v
	}
	return out
}

// PodVolumesExist implements runtime.VolumeHolder: the manager holds the
// pod from its first SetUpPod until its volumes are torn down.
func (m *VolumeManager) PodVolumesExist(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.pods[uid]
	return ok
}

// SetUpError lists the volumes of a pod that are not set up, with why. It
// wraps ErrNotReady.
type SetUpError struct {
	// Volumes are the names of the volumes not set up, sorted.
	Volumes []string
	// Causes holds each volume's error, by name.
	Causes map[string]error
}

func (e *SetUpError) Error() string {
	parts := make([]string, 0, len(e.Volumes))
	for _, v := range e.Volumes {
		parts = append(parts, fmt.Sprintf("volume %q: %v", v, e.Causes[v]))
	}
	return fmt.Sprintf("unmounted volumes=[%s]: %s", strings.Join(e.Volumes, " "), strings.Join(parts, "; "))
}

// Unwrap makes errors.Is find ErrNotReady.
func (e *SetUpError) Unwrap() error { return ErrNotReady }

// SetUpPod implements Manager.
func (m *VolumeManager) SetUpPod(ctx context.Context, pod *corev1.Pod) error {
	st := m.state(pod.UID)
	st.mu.Lock()
	defer st.mu.Unlock()
	m.mu.Lock()
	changed := st.pod != pod
	st.pod = pod
	if changed {
		m.publishCounts()
	}
	m.mu.Unlock()
	return m.setUp(ctx, st, pod, false)
}

// setUp sets up (or refreshes) every volume of pod; with refreshOnly it
// leaves the volumes that are not set up alone.
func (m *VolumeManager) setUp(ctx context.Context, st *podState, pod *corev1.Pod, refreshOnly bool) error {
	failed := &SetUpError{Causes: map[string]error{}}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		m.mu.Lock()
		_, done := st.volumes[v.Name]
		last := st.lastErr[v.Name]
		m.mu.Unlock()
		if (done && !refreshable(v)) || (!done && refreshOnly) {
			continue
		}
		key := string(pod.UID) + "/" + v.Name
		now := m.clk.Now()
		if m.backOff.IsInBackOffSinceUpdate(key, now) {
			if !done {
				failed.add(v.Name, last)
			}
			continue
		}
		vol, err := m.setUpVolume(ctx, pod, v, done)
		m.metrics.observe(v, m.clk.Since(now), err)
		if err != nil {
			m.backOff.Next(key, now)
			m.rec.Eventf(pod, corev1.EventTypeWarning, EventFailedMount, "MountVolume.SetUp failed for volume %q : %v", v.Name, err)
			m.log.V(2).Info("volume set-up failed", "pod", klog.KObj(pod), "volume", v.Name, "err", err, "retryAfter", m.backOff.Get(key))
			m.mu.Lock()
			st.lastErr[v.Name] = err
			m.mu.Unlock()
			if !done {
				if vol, ok := m.reconstruct(pod, v); ok {
					// Written before this manager started (the agent
					// restarted): keep serving the files on disk.
					m.log.V(2).Info("volume reconstructed from disk", "pod", klog.KObj(pod), "volume", v.Name)
					m.mu.Lock()
					st.volumes[v.Name] = vol
					m.publishCounts()
					m.mu.Unlock()
					continue
				}
				failed.add(v.Name, err)
			}
			continue
		}
		m.backOff.Reset(key)
		m.mu.Lock()
		st.volumes[v.Name] = vol
		delete(st.lastErr, v.Name)
		if !done {
			m.publishCounts()
		}
		m.mu.Unlock()
		if !done {
			m.log.V(2).Info("volume set up", "pod", klog.KObj(pod), "volume", v.Name, "path", vol.HostPath)
		}
	}
	if len(failed.Volumes) > 0 {
		sort.Strings(failed.Volumes)
		return failed
	}
	return nil
}

func (e *SetUpError) add(name string, err error) {
	e.Volumes = append(e.Volumes, name)
	e.Causes[name] = err
}

// state returns the pod's state, creating it.
func (m *VolumeManager) state(uid types.UID) *podState {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.pods[uid]
	if st == nil {
		st = &podState{volumes: map[string]noderuntime.Volume{}, lastErr: map[string]error{}, offlineLogged: map[string]bool{}}
		m.pods[uid] = st
	}
	return st
}

// TearDownPod implements Manager.
func (m *VolumeManager) TearDownPod(_ context.Context, pod *corev1.Pod) error {
	return m.tearDown(pod.UID, pod)
}

// tearDown removes the pod's volume directory and forgets the pod; pod may
// be nil when only the UID is known.
func (m *VolumeManager) tearDown(uid types.UID, pod *corev1.Pod) error {
	st := m.state(uid)
	st.mu.Lock()
	defer st.mu.Unlock()
	m.mu.Lock()
	if pod == nil {
		pod = st.pod
	}
	st.volumes = map[string]noderuntime.Volume{}
	m.mu.Unlock()
	if f, ok := m.tokens.(TokenForgetter); ok {
		f.DeleteServiceAccountToken(uid)
	}
	dir := m.volumesDir(uid)
	// The containers' subPath mounts hold the volumes they come from (a
	// tmpfs stays in memory while one is mounted): they go first, as the
	// kubelet cleans a volume's subPaths before it unmounts the volume.
	if err := mount.CleanSubPaths(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("clean subPath mounts of pod %s: %w", uid, err)
	}
	if _, err := os.Lstat(dir); err == nil {
		if err := mount.UnmountBelow(dir); err != nil {
			return fmt.Errorf("unmount volumes of pod %s: %w", uid, err)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove volumes of pod %s: %w", uid, err)
		}
		m.log.V(2).Info("volumes torn down", "podUID", uid)
	}
	// The plugins' markers go with the volumes.
	if err := os.RemoveAll(m.pluginsDir(uid)); err != nil {
		return fmt.Errorf("remove volume markers of pod %s: %w", uid, err)
	}
	// The pod directory goes too when nothing else is in it (the runtime
	// keeps its own files, and removes the directory, otherwise).
	if err := os.Remove(filepath.Dir(dir)); err == nil {
		m.log.V(4).Info("empty pod directory removed", "podUID", uid)
	}
	if s := m.offlineStore(); s != nil {
		if err := s.Forget(uid); err != nil {
			return err
		}
	}
	m.mu.Lock()
	delete(m.pods, uid)
	m.publishCounts()
	m.mu.Unlock()
	if pod != nil {
		for i := range pod.Spec.Volumes {
			m.backOff.Reset(string(uid) + "/" + pod.Spec.Volumes[i].Name)
		}
	}
	return nil
}

// CleanupPods implements Manager.
func (m *VolumeManager) CleanupPods(_ context.Context, removed func(types.UID) bool) error {
	m.mu.Lock()
	var gone []types.UID
	for uid := range m.pods {
		if removed(uid) {
			gone = append(gone, uid)
		}
	}
	m.mu.Unlock()
	var errs []error
	for _, uid := range gone {
		errs = append(errs, m.tearDown(uid, nil))
	}
	m.backOff.GC()
	if s := m.offlineStore(); s != nil {
		errs = append(errs, s.Prune())
	}
	return errors.Join(errs...)
}

// Run implements Manager.
func (m *VolumeManager) Run(ctx context.Context) error {
	t := m.clk.NewTicker(m.cfg.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			m.Resync(ctx)
		}
	}
}

// Resync refreshes the API-backed volumes of every pod set up here, with
// the pod object of its last SetUpPod. It blocks for the I/O; the API
// calls of each pod are bounded by ResyncTimeout.
func (m *VolumeManager) Resync(ctx context.Context) {
	m.mu.Lock()
	states := make([]*podState, 0, len(m.pods))
	for _, st := range m.pods {
		states = append(states, st)
	}
	m.mu.Unlock()
	for _, st := range states {
		st.mu.Lock()
		m.mu.Lock()
		pod := st.pod
		m.mu.Unlock()
		if pod != nil {
			podCtx, cancel := context.WithTimeout(ctx, m.cfg.ResyncTimeout)
			_ = m.setUp(podCtx, st, pod, true)
			cancel()
		}
		st.mu.Unlock()
	}
}

// volumesDir is <RootDir>/pods/<uid>/volumes.
func (m *VolumeManager) volumesDir(uid types.UID) string {
	return filepath.Join(m.cfg.RootDir, "pods", string(uid), "volumes")
}

// volumeDir is where the pod's volume name of plugin lives.
func (m *VolumeManager) volumeDir(uid types.UID, plugin, name string) string {
	return filepath.Join(m.volumesDir(uid), plugin, name)
}

// now is the time that names a new version of a volume's files.
func (m *VolumeManager) now() time.Time { return m.clk.Now() }

// PodVolumeDirs returns, by volume name, the directory of each of the
// pod's set-up volumes whose usage the kubelet's volume plugins report
// (every kind but hostPath, whose plugin reports none): what the stats
// provider measures for the pod's volume stats (it implements
// stats.VolumeLister).
func (m *VolumeManager) PodVolumeDirs(uid types.UID) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	st := m.pods[uid]
	if st == nil || st.pod == nil {
		return out
	}
	for i := range st.pod.Spec.Volumes {
		v := &st.pod.Spec.Volumes[i]
		if vol, ok := st.volumes[v.Name]; ok && v.HostPath == nil && vol.HostPath != "" {
			out[v.Name] = vol.HostPath
		}
	}
	return out
}
