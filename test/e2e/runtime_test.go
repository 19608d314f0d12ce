//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/volumes"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
)

// trapSleep exits promptly on SIGTERM (a bare sleep as PID 1 ignores it).
const trapSleep = `trap "exit 0" TERM; sleep 3600 & wait`

// runtimeCase is one Manager over the real runtime with its own instance ID.
type runtimeCase struct {
	t   *testing.T
	m   *cri.Manager
	vm  *volumes.VolumeManager // the pod's volumes; the runtime reads them
	pod *corev1.Pod
	cfg cri.Config
}

func newRuntimeCase(t *testing.T) *runtimeCase {
	t.Helper()
	env := loadEnv(t)
	suffix := fmt.Sprintf("%d", time.Now().UnixNano())
	root := t.TempDir()
	cfg := cri.Config{
		InstanceID:   "e2e-runtime-" + suffix,
		RootDir:      root,
		PodLogsDir:   filepath.Join(root, "logs"),
		CgroupParent: env.CgroupParent,
		// Several agents share the machine: no test writes the node's
		// /var/log/containers.
		ContainerLogsDir: filepath.Join(root, "containers"),
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 2})
	rc := &runtimeCase{t: t, cfg: cfg, m: cri.NewManager(env.runtime(t), env.images(t), clock.RealClock{}, log, cfg),
		vm: volumes.New(nil, nil, nil, nil, clock.RealClock{}, nil, log, volumes.Config{RootDir: cfg.RootDir})}
	rc.m.SetVolumeGetter(rc.vm)
	grace := int64(10)
	rc.pod = &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rt-" + suffix, Namespace: "nodekit-e2e", UID: types.UID("uid-" + suffix)},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace},
	}
	for _, name := range []string{"one", "two"} {
		rc.pod.Spec.Containers = append(rc.pod.Spec.Containers, corev1.Container{
			Name: name, Image: env.Image, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"sh", "-c", trapSleep},
		})
	}
	t.Cleanup(rc.cleanup)
	return rc
}

// cleanup kills and removes whatever the test left behind, through the
// manager and then directly, so that a failed test leaves nothing running.
func (rc *runtimeCase) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods, err := rc.m.GetPods(ctx, true)
	if err != nil {
		rc.t.Logf("cleanup: GetPods: %v", err)
	}
	zero := int64(0)
	for _, p := range pods {
		if err := rc.m.KillPod(ctx, nil, p, &zero); err != nil {
			rc.t.Logf("cleanup: KillPod %s: %v", p.ID, err)
		}
	}
	if err := rc.m.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
		rc.t.Logf("cleanup: GarbageCollect: %v", err)
	}
	rs := loadEnv(rc.t).runtime(rc.t)
	sbs, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{noderuntime.LabelInstance: rc.cfg.InstanceID}})
	if err != nil {
		rc.t.Logf("cleanup: list sandboxes: %v", err)
		return
	}
	for _, sb := range sbs {
		_ = rs.StopPodSandbox(ctx, sb.Id)
		_ = rs.RemovePodSandbox(ctx, sb.Id)
	}
}

func (rc *runtimeCase) status(ctx context.Context) *noderuntime.PodStatus {
	rc.t.Helper()
	st, err := rc.m.GetPodStatus(ctx, rc.pod.UID, rc.pod.Name, rc.pod.Namespace)
	if err != nil {
		rc.t.Fatalf("GetPodStatus: %v", err)
	}
	return st
}

// waitFor polls GetPodStatus until cond holds, failing at the deadline.
func (rc *runtimeCase) within(ctx context.Context, what string, timeout time.Duration, cond func(*noderuntime.PodStatus) bool) *noderuntime.PodStatus {
	rc.t.Helper()
	deadline := time.Now().Add(timeout)
	var st *noderuntime.PodStatus
	for {
		st = rc.status(ctx)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			rc.t.Fatalf("%s did not happen within %s; containers: %s", what, timeout, describeContainers(st))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkCgroup verifies that the pod's sandbox runs in its pod cgroup,
// CgroupParent/kubepods/[<qos>/]pod<uid> (cgroup v1 pids hierarchy, or the
// unified v2 tree).
func (rc *runtimeCase) checkCgroup() {
	rc.t.Helper()
	if rc.cfg.CgroupParent == "" {
		return
	}
	pod := "pod" + string(rc.pod.UID)
	for _, qos := range []string{"", "burstable", "besteffort"} {
		rel := filepath.Join(rc.cfg.CgroupParent, "kubepods", qos, pod)
		for _, root := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
			if _, err := os.Stat(filepath.Join(root, rel, "cgroup.procs")); err == nil {
				return
			}
		}
	}
	rc.t.Errorf("no cgroup %s/kubepods/.../%s under /sys/fs/cgroup/pids or /sys/fs/cgroup", rc.cfg.CgroupParent, pod)
}

func describeContainers(st *noderuntime.PodStatus) string {
	out := ""
	for _, c := range st.ContainerStatuses {
		out += fmt.Sprintf("[%s %s exit=%d reason=%q] ", c.Name, c.State, c.ExitCode, c.Reason)
	}
	return out
}

func TestRuntimeManagerRunsKillsAndCollectsPod(t *testing.T) {
	rc := newRuntimeCase(t)
	ctx := context.Background()
	v, err := rc.m.Version(ctx)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	if rc.m.Type() != v.RuntimeName || v.RuntimeName == "" {
		t.Fatalf("Type %q after Version %+v", rc.m.Type(), v)
	}
	if st, err := rc.m.Status(ctx); err != nil || !st.Ready {
		t.Fatalf("Status = %+v, %v; want a ready runtime", st, err)
	}

	start := time.Now()
	if err := rc.m.SyncPod(ctx, rc.pod, rc.status(ctx)).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	st := rc.within(ctx, "both containers running", 60*time.Second, func(s *noderuntime.PodStatus) bool {
		return len(s.GetRunningContainerStatuses()) == 2
	})
	t.Logf("pod running %s after SyncPod started", time.Since(start).Round(time.Millisecond))
	if len(st.IPs) == 0 {
		t.Errorf("pod has no IP: %+v", st.SandboxStatuses)
	}
	for _, c := range st.ContainerStatuses {
		if c.RestartCount != 0 || c.Hash == 0 || c.ID.Type != v.RuntimeName || c.Image != rc.pod.Spec.Containers[0].Image {
			t.Errorf("container status %+v", c)
		}
	}
	if r := rc.m.SyncPod(ctx, rc.pod, st); r.Error() != nil || len(r.Steps) != 0 {
		t.Fatalf("second SyncPod of a running pod took steps %+v", r.Steps)
	}
	rc.checkCgroup()
	logDir := filepath.Join(rc.cfg.RootDir, "logs", rc.pod.Namespace+"_"+rc.pod.Name+"_"+string(rc.pod.UID))
	if _, err := os.Stat(filepath.Join(logDir, "one", "0.log")); err != nil {
		t.Errorf("container log file: %v", err)
	}

	start = time.Now()
	if err := rc.m.KillPod(ctx, rc.pod, st.ToPod(), nil); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	st = rc.within(ctx, "no container running", 60*time.Second, func(s *noderuntime.PodStatus) bool {
		return len(s.GetRunningContainerStatuses()) == 0
	})
	killed := time.Since(start)
	t.Logf("pod killed in %s", killed.Round(time.Millisecond))
	if killed > 8*time.Second {
		t.Errorf("KillPod took %s: the TERM trap should end the containers at once", killed)
	}
	for _, s := range st.SandboxStatuses {
		if s.GetState() != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			t.Errorf("sandbox %s still ready after KillPod", s.GetId())
		}
	}

	start = time.Now()
	if err := rc.m.GarbageCollect(ctx, func(uid types.UID) bool { return uid == rc.pod.UID }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	t.Logf("pod collected in %s", time.Since(start).Round(time.Millisecond))
	if st := rc.status(ctx); len(st.ContainerStatuses)+len(st.SandboxStatuses) != 0 {
		t.Errorf("GarbageCollect left %d containers and %d sandboxes", len(st.ContainerStatuses), len(st.SandboxStatuses))
	}
	if _, err := os.Stat(logDir); !os.IsNotExist(err) {
		t.Errorf("pod log directory still there: %v", err)
	}
}
