//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// syncUntil sets up the pod's volumes and runs SyncPod with fresh statuses
// until cond holds.
func (rc *runtimeCase) syncUntil(ctx context.Context, what string, cond func(*noderuntime.PodStatus) bool) *noderuntime.PodStatus {
	rc.t.Helper()
	deadline := time.Now().Add(settle)
	for {
		st := rc.status(ctx)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			rc.t.Fatalf("%s did not happen within %s; containers: %s", what, settle, describeContainers(st))
		}
		if err := rc.vm.SetUpPod(ctx, rc.pod); err != nil {
			rc.t.Fatalf("SetUpPod: %v", err)
		}
		if err := rc.m.SyncPod(ctx, rc.pod, st).Error(); err != nil {
			rc.t.Fatalf("SyncPod: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestRuntimeManagerStartsEphemeralContainersOnce(t *testing.T) {
	rc := newRuntimeCase(t)
	ctx := context.Background()
	rc.syncUntil(ctx, "both containers running", func(s *noderuntime.PodStatus) bool { return len(s.GetRunningContainerStatuses()) == 2 })
	rc.pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{TargetContainerName: "one",
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: rc.pod.Spec.Containers[0].Image,
			ImagePullPolicy: corev1.PullIfNotPresent, Command: []string{"sh", "-c", "echo debugging; ps; sleep 1"}}}}
	st := rc.syncUntil(ctx, "the ephemeral container ran to completion", func(s *noderuntime.PodStatus) bool {
		d := s.FindContainerStatusByName("debugger")
		return d != nil && d.State == noderuntime.ContainerStateExited
	})
	if d := st.FindContainerStatusByName("debugger"); d.ExitCode != 0 {
		t.Fatalf("debugger exited with %d", d.ExitCode)
	}
	for range 3 {
		if r := rc.m.SyncPod(ctx, rc.pod, rc.status(ctx)); r.Error() != nil || len(r.Steps) != 0 {
			t.Fatalf("a sync after the ephemeral container exited took steps %+v", r.Steps)
		}
	}
	log, err := os.ReadFile(filepath.Join(rc.cfg.RootDir, "logs", rc.pod.Namespace+"_"+rc.pod.Name+"_"+string(rc.pod.UID), "debugger", "0.log"))
	if err != nil || !strings.Contains(string(log), "debugging") || !strings.Contains(string(log), "sleep 3600") {
		t.Fatalf("debugger log %q (%v): want its output and the target's processes", log, err)
	}
}

func TestRuntimeManagerVolumesAndPodDirectory(t *testing.T) {
	rc := newRuntimeCase(t)
	ctx := context.Background()
	hostDir := filepath.Join(t.TempDir(), "host")
	size := resource.MustParse("4Mi")
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	rc.pod.Spec.Volumes = []corev1.Volume{
		{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &size}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: &dirOrCreate}}},
	}
	one := &rc.pod.Spec.Containers[0]
	one.Command = []string{"sh", "-c", "df -k /mem | tail -1 > /host/sub/df; echo hi > /mem/x; " + trapSleep}
	one.VolumeMounts = []corev1.VolumeMount{{Name: "mem", MountPath: "/mem"}, {Name: "host", MountPath: "/host/sub", SubPath: "made/here"}}
	two := &rc.pod.Spec.Containers[1]
	two.Command = []string{"sh", "-c", "touch /ro/nope 2>/dev/null && echo writable > /mem/ro || echo readonly > /mem/ro; " + trapSleep}
	two.VolumeMounts = []corev1.VolumeMount{{Name: "mem", MountPath: "/mem"}, {Name: "host", MountPath: "/ro", ReadOnly: true}}
	rc.syncUntil(ctx, "both containers running", func(s *noderuntime.PodStatus) bool { return len(s.GetRunningContainerStatuses()) == 2 })
	memDir := filepath.Join(rc.cfg.RootDir, "pods", string(rc.pod.UID), "volumes", "kubernetes.io~empty-dir", "mem")
	waitFile := func(path string) string {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
				return string(b)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was not written", path)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if got := waitFile(filepath.Join(memDir, "x")); got != "hi\n" {
		t.Errorf("emptyDir file = %q", got)
	}
	if got := waitFile(filepath.Join(memDir, "ro")); got != "readonly\n" {
		t.Errorf("readOnly hostPath mount was %q", got)
	}
	if df := waitFile(filepath.Join(hostDir, "made", "here", "df")); !strings.Contains(df, " 4096 ") {
		t.Errorf("tmpfs size line %q, want 4096 KiB", df)
	}
	if err := rc.m.KillPod(ctx, rc.pod, rc.status(ctx).ToPod(), nil); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if err := rc.vm.TearDownPod(ctx, rc.pod); err != nil {
		t.Fatalf("TearDownPod: %v", err)
	}
	if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), string(rc.pod.UID)) {
		t.Error("the tmpfs of the pod is still mounted after TearDownPod")
	}
	if err := rc.m.GarbageCollect(ctx, func(uid types.UID) bool { return uid == rc.pod.UID }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if _, err := os.Stat(filepath.Join(rc.cfg.RootDir, "pods", string(rc.pod.UID))); !os.IsNotExist(err) {
		t.Errorf("pod directory still there after GarbageCollect: %v", err)
	}
	if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), string(rc.pod.UID)) {
		t.Error("the tmpfs of the pod is still mounted")
	}
	if _, err := os.Stat(filepath.Join(hostDir, "made", "here", "df")); err != nil {
		t.Errorf("the hostPath content must survive the pod: %v", err)
	}
}
