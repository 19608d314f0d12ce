package cri

import (
	"errors"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// createdNames lists the names of the containers created so far, in order.
func (r *recordingRuntime) createdNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.containerConfigs {
		out = append(out, c.GetMetadata().GetName())
	}
	return out
}

// exit marks the newest instance of a container exited.
func (e *testEnv) exit(t *testing.T, pod *corev1.Pod, name string, code int32) {
	t.Helper()
	e.rs.setContainer(t, e.containerIDOf(t, pod, name), runtimeapi.ContainerState_CONTAINER_EXITED, code, e.clk.Now())
}

func TestSyncPodRunsInitContainersOneAtATime(t *testing.T) {
	e := newTestEnv(t)
	pod := initPod(corev1.RestartPolicyAlways, []string{"i1", "i2"}, []string{"main"}, nil)
	steps := []struct {
		exit string // the init container that completes before this sync
		want []string
	}{
		{"", []string{"i1"}},
		{"", []string{"i1"}}, // i1 still runs: nothing new
		{"i1", []string{"i1", "i2"}},
		{"i2", []string{"i1", "i2", "main"}},
	}
	for i, s := range steps {
		if s.exit != "" {
			e.exit(t, pod, s.exit, 0)
		}
		if err := e.sync(t, pod).Error(); err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
		if got := e.rs.createdNames(); !slices.Equal(got, s.want) {
			t.Fatalf("after sync %d created %v, want %v", i, got, s.want)
		}
	}
}

func TestSyncPodRetriesAFailedInitContainerWithBackOff(t *testing.T) {
	e := newTestEnv(t)
	pod := initPod(corev1.RestartPolicyOnFailure, []string{"i1"}, []string{"main"}, nil)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	e.exit(t, pod, "i1", 1)
	if err := e.sync(t, pod).Error(); err != nil { // first failure: restarted at once
		t.Fatal(err)
	}
	e.exit(t, pod, "i1", 1)
	res := e.sync(t, pod)
	if !errors.Is(failedSteps(res)["StartContainer/i1"].Err, noderuntime.ErrCrashLoopBackOff) {
		t.Fatalf("second failure: want CrashLoopBackOff on i1, got %v", res.Error())
	}
	if got := e.rs.createdNames(); !slices.Equal(got, []string{"i1", "i1"}) {
		t.Fatalf("created %v, want i1 twice and no regular container", got)
	}
	st := e.status(t, pod).FindContainerStatusByName("i1")
	if st.RestartCount != 1 {
		t.Fatalf("restart count = %d, want 1", st.RestartCount)
	}
}

func TestSyncPodFailsAPodWhoseInitContainerFailedUnderNever(t *testing.T) {
	e := newTestEnv(t)
	pod := initPod(corev1.RestartPolicyNever, []string{"i1"}, []string{"main"}, nil)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	e.exit(t, pod, "i1", 2)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	st := e.status(t, pod)
	if got := e.rs.createdNames(); !slices.Equal(got, []string{"i1"}) {
		t.Fatalf("created %v, want only i1", got)
	}
	if st.SandboxStatuses[0].GetState() != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Fatal("the pod's sandbox was not stopped")
	}
}

func TestSyncPodRecreatedSandboxRunsInitContainersAgain(t *testing.T) {
	e := newTestEnv(t)
	pod := initPod(corev1.RestartPolicyAlways, []string{"i1"}, []string{"main"}, nil)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	oldInit := e.containerIDOf(t, pod, "i1")
	e.exit(t, pod, "i1", 0)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	old := e.status(t, pod)
	e.rs.setSandboxState(t, old.SandboxStatuses[0].GetId(), runtimeapi.PodSandboxState_SANDBOX_NOTREADY)
	e.exit(t, pod, "main", 137)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("sync after the sandbox died: %v", err)
	}
	st := e.status(t, pod)
	if len(st.SandboxStatuses) != 2 || st.SandboxStatuses[0].GetMetadata().GetAttempt() != 1 {
		t.Fatalf("want a second sandbox with attempt 1, got %d sandboxes", len(st.SandboxStatuses))
	}
	i1 := st.FindContainerStatusByName("i1")
	if i1 == nil || i1.ID.ID == oldInit || i1.SandboxID != st.SandboxStatuses[0].GetId() || i1.State != noderuntime.ContainerStateRunning {
		t.Fatalf("i1 = %+v, want a new instance running in the new sandbox", i1)
	}
	for _, cs := range st.ContainerStatuses {
		if cs.ID.ID == oldInit {
			t.Fatal("the old init container was not removed")
		}
	}
	if got := e.rs.createdNames(); !slices.Equal(got, []string{"i1", "main", "i1"}) {
		t.Fatalf("created %v, want i1, main, then i1 again before main", got)
	}
}

func TestSyncPodRestartsAFailedSidecarAndStillStartsRegularContainers(t *testing.T) {
	e := newTestEnv(t)
	pod := initPod(corev1.RestartPolicyAlways, []string{"log-sc"}, []string{"main"}, nil)
	for range 2 {
		if err := e.sync(t, pod).Error(); err != nil {
			t.Fatal(err)
		}
	}
	e.exit(t, pod, "log-sc", 1)
	e.exit(t, pod, "main", 1)
	e.rs.InjectError("CreateContainer", errors.New("no space left"))
	res := e.sync(t, pod)
	failed := failedSteps(res)
	if !errors.Is(failed["StartContainer/log-sc"].Err, noderuntime.ErrCreateContainer) || len(failed) != 1 {
		t.Fatalf("want only the sidecar's start to fail, got %v", res.Error())
	}
	if got := e.rs.createdNames(); !slices.Equal(got, []string{"log-sc", "main", "log-sc", "main"}) {
		t.Fatalf("created %v, want the sidecar tried and main restarted", got)
	}
}

func TestSyncPodStartsEphemeralContainersOnceInTheTargetNamespace(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "main")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	mainID := e.containerIDOf(t, pod, "main")
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{TargetContainerName: "main",
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: testImage, ImagePullPolicy: corev1.PullIfNotPresent}}}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	cfg := e.rs.lastContainerConfig(t)
	ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if cfg.GetMetadata().GetName() != "dbg" || ns.GetPid() != runtimeapi.NamespaceMode_TARGET || ns.GetTargetId() != mainID {
		t.Fatalf("ephemeral config %s: pid %v target %q, want TARGET %q", cfg.GetMetadata().GetName(), ns.GetPid(), ns.GetTargetId(), mainID)
	}
	e.exit(t, pod, "dbg", 0)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	if got := e.rs.createdNames(); !slices.Equal(got, []string{"main", "dbg"}) {
		t.Fatalf("created %v, want the ephemeral container once", got)
	}
}

func TestSyncPodRefusesAnEphemeralContainerWithoutItsTarget(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "main")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{TargetContainerName: "nope",
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: testImage}}}
	res := e.sync(t, pod)
	if !errors.Is(failedSteps(res)["StartContainer/dbg"].Err, noderuntime.ErrConfig) {
		t.Fatalf("want CreateContainerConfigError for dbg, got %v", res.Error())
	}
}

// startupMap is a runtime.StartupResults for tests.
type startupMap struct {
	mu sync.Mutex
	m  map[string]noderuntime.StartupResult
}

func (s *startupMap) StartupResult(id noderuntime.ContainerID) noderuntime.StartupResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id.ID]
}

func TestSyncPodGatesTheNextInitContainerOnASidecarsStartupProbe(t *testing.T) {
	e := newTestEnv(t)
	pod := initPod(corev1.RestartPolicyAlways, []string{"log-sc", "i2"}, []string{"main"}, nil)
	pod.Spec.InitContainers[0].StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
		Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	results := &startupMap{m: map[string]noderuntime.StartupResult{}}
	e.m.SetStartupResults(results)
	for range 2 {
		if err := e.sync(t, pod).Error(); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.rs.createdNames(); !slices.Equal(got, []string{"log-sc"}) {
		t.Fatalf("created %v before the startup probe succeeded, want only the sidecar", got)
	}
	results.mu.Lock()
	results.m[e.containerIDOf(t, pod, "log-sc")] = noderuntime.StartupSucceeded
	results.mu.Unlock()
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	if got := e.rs.createdNames(); !slices.Equal(got, []string{"log-sc", "i2"}) {
		t.Fatalf("created %v after the startup probe succeeded, want i2 next", got)
	}
	e.m.SetStartupResults(nil)
	var _ noderuntime.ProbeAware = e.m
}

func TestSyncPodKillsSidecarsOfAFinishedJob(t *testing.T) {
	e := newTestEnv(t)
	pod := initPod(corev1.RestartPolicyNever, []string{"log-sc"}, []string{"main"}, nil)
	for range 2 {
		if err := e.sync(t, pod).Error(); err != nil {
			t.Fatal(err)
		}
	}
	e.exit(t, pod, "main", 0)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	st := e.status(t, pod)
	if len(st.GetRunningContainerStatuses()) != 0 {
		t.Fatal("the sidecar still runs after the job finished")
	}
	if got := e.rs.createdNames(); !slices.Equal(got, []string{"log-sc", "main"}) {
		t.Fatalf("created %v, want nothing restarted", got)
	}
}
