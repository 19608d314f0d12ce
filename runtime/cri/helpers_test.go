package cri

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

const (
	testInstance = "node-a"
	testImage    = "localhost/nodekit/busybox:1"
)

// recordingRuntime is the cri-api fake, remembering the full configs and stop
// timeouts it was given (the fake keeps only part of them).
type recordingRuntime struct {
	*fakeapi.FakeRuntimeService

	mu               sync.Mutex
	sandboxConfigs   []*runtimeapi.PodSandboxConfig
	sandboxHandlers  []string
	containerConfigs []*runtimeapi.ContainerConfig
	stopTimeouts     map[string]int64
	// stopOrder lists container names in the order StopContainer was called.
	stopOrder []string
	// onStop, when set, runs inside StopContainer before it returns.
	onStop func(name string)
	// onCreate, when set, runs after CreateContainer made the container.
	onCreate func(cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig)
}

func (r *recordingRuntime) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	r.mu.Lock()
	r.sandboxConfigs = append(r.sandboxConfigs, cfg)
	r.sandboxHandlers = append(r.sandboxHandlers, handler)
	r.mu.Unlock()
	return r.FakeRuntimeService.RunPodSandbox(ctx, cfg, handler)
}

func (r *recordingRuntime) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	r.mu.Lock()
	r.containerConfigs = append(r.containerConfigs, cfg)
	r.mu.Unlock()
	id, err := r.FakeRuntimeService.CreateContainer(ctx, sandboxID, cfg, sbCfg)
	if err != nil {
		return id, err
	}
	// Keep what containerd reports and the fake drops: mounts and the full
	// log path.
	r.Lock()
	c := r.Containers[id]
	c.Mounts = cfg.GetMounts()
	c.LogPath = filepath.Join(sbCfg.GetLogDirectory(), cfg.GetLogPath())
	r.Unlock()
	if r.onCreate != nil {
		r.onCreate(cfg, sbCfg)
	}
	return id, nil
}

func (r *recordingRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	r.Lock()
	name := ""
	if c, ok := r.Containers[id]; ok {
		name = c.Metadata.Name
	}
	r.Unlock()
	r.mu.Lock()
	r.stopTimeouts[id] = timeout
	r.stopOrder = append(r.stopOrder, name)
	onStop := r.onStop
	r.mu.Unlock()
	if onStop != nil {
		onStop(name)
	}
	return r.FakeRuntimeService.StopContainer(ctx, id, timeout)
}

// stops returns the container names in stop order and their timeouts.
func (r *recordingRuntime) stops() ([]string, map[string]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byName := map[string]int64{}
	r.Lock()
	for id, t := range r.stopTimeouts {
		if c, ok := r.Containers[id]; ok {
			byName[c.Metadata.Name] = t
		}
	}
	r.Unlock()
	return slices.Clone(r.stopOrder), byName
}

// lastContainerConfig returns the newest CreateContainer config.
func (r *recordingRuntime) lastContainerConfig(t *testing.T) *runtimeapi.ContainerConfig {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.containerConfigs) == 0 {
		t.Fatal("no CreateContainer call")
	}
	return r.containerConfigs[len(r.containerConfigs)-1]
}

// setContainer changes a fake container's state under the fake's lock.
func (r *recordingRuntime) setContainer(t *testing.T, id string, state runtimeapi.ContainerState, exitCode int32, finished time.Time) {
	t.Helper()
	r.Lock()
	defer r.Unlock()
	c, ok := r.Containers[id]
	if !ok {
		t.Fatalf("no fake container %q", id)
	}
	c.State = state
	c.ExitCode = exitCode
	c.FinishedAt = finished.UnixNano()
}

// setSandboxState changes a fake sandbox's state.
func (r *recordingRuntime) setSandboxState(t *testing.T, id string, state runtimeapi.PodSandboxState) {
	t.Helper()
	r.Lock()
	defer r.Unlock()
	s, ok := r.Sandboxes[id]
	if !ok {
		t.Fatalf("no fake sandbox %q", id)
	}
	s.State = state
}

type testEnv struct {
	m   *Manager
	rs  *recordingRuntime
	is  *fakeapi.FakeImageService
	clk *clocktesting.FakeClock
	cfg Config
	// cgroups records the pod cgroups the manager makes (never the host's).
	cgroups *fakeCgroups
}

// newTestEnv builds a manager over fakes, with a temp root dir and resolver
// file, and the busybox image present.
func newTestEnv(t *testing.T, mutate ...func(*Config)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("# host\nnameserver 10.0.0.53\nsearch example.org\noptions ndots:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		InstanceID: testInstance, RootDir: filepath.Join(dir, "root"), ResolvConf: resolv,
		PodLogsDir: filepath.Join(dir, "root", "logs"), ContainerLogsDir: filepath.Join(dir, "containers"),
	}
	for _, f := range mutate {
		f(&cfg)
	}
	rs := &recordingRuntime{FakeRuntimeService: fakeapi.NewFakeRuntimeService(), stopTimeouts: map[string]int64{}}
	is := fakeapi.NewFakeImageService()
	is.SetFakeImages([]string{testImage})
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	m := NewManager(rs, is, clk, logr.Discard(), cfg)
	cg := &fakeCgroups{}
	m.cgroups.use(cg)
	m.host = &hostFacts{sysRoot: dir} // no /proc or /sys: no thermal paths, no MemTotal
	return &testEnv{m: m, rs: rs, is: is, clk: clk, cfg: cfg, cgroups: cg}
}

// status is GetPodStatus that fails the test on error.
func (e *testEnv) status(t *testing.T, pod *corev1.Pod) *noderuntime.PodStatus {
	t.Helper()
	s, err := e.m.GetPodStatus(context.Background(), pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatalf("GetPodStatus: %v", err)
	}
	return s
}

// sync runs SyncPod with a fresh status.
func (e *testEnv) sync(t *testing.T, pod *corev1.Pod) *noderuntime.SyncResult {
	t.Helper()
	return e.m.SyncPod(context.Background(), pod, e.status(t, pod))
}

// containerIDOf finds the newest instance of a container.
func (e *testEnv) containerIDOf(t *testing.T, pod *corev1.Pod, name string) string {
	t.Helper()
	cs := e.status(t, pod).FindContainerStatusByName(name)
	if cs == nil {
		t.Fatalf("container %q not found", name)
	}
	return cs.ID.ID
}

// newPod returns a pod with the named busybox containers.
func newPod(uid string, names ...string) *corev1.Pod {
	grace := int64(30)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-" + uid, Namespace: "default", UID: types.UID(uid),
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "hi"},
		},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace},
	}
	for _, n := range names {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: n, Image: testImage, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"sh", "-c", "sleep 3600"},
		})
	}
	return pod
}

// stepErrs returns the failed steps of a result by "Action/Target".
func failedSteps(r *noderuntime.SyncResult) map[string]noderuntime.StepResult {
	out := map[string]noderuntime.StepResult{}
	for _, s := range r.Steps {
		if s.Err != nil {
			out[string(s.Action)+"/"+s.Target] = s
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
