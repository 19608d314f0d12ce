package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

func cmVolume(name, cm string, mutate ...func(*corev1.ConfigMapVolumeSource)) corev1.Volume {
	src := &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}
	for _, f := range mutate {
		f(src)
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: src}}
}

func TestConfigMapVolumeHasEveryKeyWithTheDefaultMode(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "app", map[string]string{"a.conf": "A", "b.conf": "B"})
	pod := newPod("u1", cmVolume("cfg", "app"))
	e.setUp(t, pod)
	for k, want := range map[string]string{"a.conf": "A", "b.conf": "B"} {
		if got := e.read(t, pod, "cfg", k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
		if m := e.modeOf(t, pod, "cfg", k); m != 0o644 {
			t.Errorf("%s mode %v, want 0644", k, m)
		}
	}
	v := e.m.PodVolumes(pod.UID)["cfg"]
	if want := filepath.Join(e.root, "pods", "u1", "volumes", "kubernetes.io~configmap", "cfg"); v.HostPath != want || !v.Dir || !v.ReadOnly {
		t.Errorf("volume %+v, want %s, a read-only directory", v, want)
	}
	if _, ok := e.tmpfsSize(v.HostPath); ok {
		t.Error("a configMap volume was put on a tmpfs; the kubelet keeps it on disk")
	}
	if info, err := os.Stat(v.HostPath); err != nil || info.Mode().Perm() != 0o777 {
		t.Errorf("volume root mode %v (%v), want 0777 so non-root containers can enter it", info.Mode().Perm(), err)
	}
	if e.objects.registered["u1"] != 0 {
		t.Error("the volume manager registered the pod with the object caches; the agent's registry owns that")
	}
}

func TestConfigMapItemsModesAndOptional(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "app", map[string]string{"a": "A", "b": "B", "c": "C"})
	pod := newPod("u1",
		cmVolume("items", "app", func(s *corev1.ConfigMapVolumeSource) {
			s.DefaultMode = ptr(int32(0o400))
			s.Items = []corev1.KeyToPath{{Key: "a", Path: "dir/first"}, {Key: "b", Path: "second", Mode: ptr(int32(0o600))}}
		}),
		cmVolume("optional-missing", "nope", func(s *corev1.ConfigMapVolumeSource) { s.Optional = ptr(true) }),
		cmVolume("optional-key", "app", func(s *corev1.ConfigMapVolumeSource) {
			s.Optional = ptr(true)
			s.Items = []corev1.KeyToPath{{Key: "missing", Path: "m"}, {Key: "c", Path: "c"}}
		}),
	)
	e.setUp(t, pod)
	if got := e.read(t, pod, "items", "dir/first"); got != "A" {
		t.Errorf("dir/first = %q", got)
	}
	if m := e.modeOf(t, pod, "items", "dir/first"); m != 0o400 {
		t.Errorf("dir/first mode %v, want the defaultMode 0400", m)
	}
	if m := e.modeOf(t, pod, "items", "second"); m != 0o600 {
		t.Errorf("second mode %v, want the item's 0600", m)
	}
	if _, err := os.Stat(filepath.Join(e.m.PodVolumes(pod.UID)["items"].HostPath, "c")); !os.IsNotExist(err) {
		t.Errorf("a key not in items was projected: %v", err)
	}
	if names := entries(t, e.m.PodVolumes(pod.UID)["optional-missing"].HostPath); len(names) != 2 {
		t.Errorf("an optional missing configMap gave %q, want an empty volume", names)
	}
	if got := e.read(t, pod, "optional-key", "c"); got != "C" {
		t.Errorf("c = %q", got)
	}
	if _, err := os.Stat(filepath.Join(e.m.PodVolumes(pod.UID)["optional-key"].HostPath, "m")); !os.IsNotExist(err) {
		t.Errorf("an optional missing key gave a file: %v", err)
	}
}

func TestAMissingKeyThatIsNotOptionalFailsTheVolume(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "app", map[string]string{"a": "A"})
	pod := newPod("u1", cmVolume("cfg", "app", func(s *corev1.ConfigMapVolumeSource) {
		s.Items = []corev1.KeyToPath{{Key: "b", Path: "b"}}
	}))
	err := e.m.SetUpPod(context.Background(), pod)
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "configmap references non-existent config key: b") {
		t.Fatalf("err = %v", err)
	}
}

func TestAMissingConfigMapWaitsWithFailedMountAndBackoffUntilItExists(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", cmVolume("cfg", "app"))
	ctx := context.Background()
	err := e.m.SetUpPod(ctx, pod)
	var se *SetUpError
	if !errors.Is(err, ErrNotReady) || !errors.As(err, &se) || !slices.Equal(se.Volumes, []string{"cfg"}) {
		t.Fatalf("err = %v, want a SetUpError naming cfg", err)
	}
	want := `Warning FailedMount MountVolume.SetUp failed for volume "cfg" : configmap "app" not found`
	if events := e.rec.list(); !slices.Equal(events, []string{want}) {
		t.Fatalf("events %q, want %q", events, want)
	}
	if _, ok := e.m.PodVolumes(pod.UID)["cfg"]; ok {
		t.Fatal("a volume that failed is reported as set up")
	}
	// Inside the backoff: the same error, no new attempt, no new event.
	gets := e.objects.gets
	if err := e.m.SetUpPod(ctx, pod); !errors.Is(err, ErrNotReady) || e.objects.gets != gets || len(e.rec.list()) != 1 {
		t.Fatalf("inside the backoff: err %v, gets %d -> %d, events %d", err, gets, e.objects.gets, len(e.rec.list()))
	}
	// The backoff doubles: 500ms, then 1s.
	e.clk.Step(500 * time.Millisecond)
	if err := e.m.SetUpPod(ctx, pod); !errors.Is(err, ErrNotReady) || len(e.rec.list()) != 2 {
		t.Fatalf("after 500ms: err %v, events %q", err, e.rec.list())
	}
	e.clk.Step(900 * time.Millisecond)
	if err := e.m.SetUpPod(ctx, pod); len(e.rec.list()) != 2 {
		t.Fatalf("900ms into a 1s backoff: err %v, events %q", err, e.rec.list())
	}
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v"})
	e.clk.Step(100 * time.Millisecond)
	if err := e.m.SetUpPod(ctx, pod); err != nil {
		t.Fatalf("once the configMap exists: %v", err)
	}
	if got := e.read(t, pod, "cfg", "k"); got != "v" {
		t.Errorf("k = %q", got)
	}
}

func TestTheBackoffIsCappedAt2m2s(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", cmVolume("cfg", "app"))
	ctx := context.Background()
	for range 12 {
		_ = e.m.SetUpPod(ctx, pod)
		e.clk.Step(3 * time.Minute)
	}
	if d := e.m.backOff.Get("u1/cfg"); d != DefaultMaxBackOff {
		t.Fatalf("backoff %s after many failures, want %s", d, DefaultMaxBackOff)
	}
}

func TestAConfigMapEditIsWrittenOnTheNextSetUpOrResync(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v1"})
	pod := newPod("u1", cmVolume("cfg", "app"))
	e.setUp(t, pod)
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v2"})
	e.setUp(t, pod)
	if got := e.read(t, pod, "cfg", "k"); got != "v2" {
		t.Fatalf("after a sync: k = %q, want v2", got)
	}
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v3"})
	e.m.Resync(context.Background())
	if got := e.read(t, pod, "cfg", "k"); got != "v3" {
		t.Fatalf("after a resync: k = %q, want v3", got)
	}
}

func TestARefreshThatFailsKeepsTheFilesAndRecordsAnEvent(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v1"})
	pod := newPod("u1", cmVolume("cfg", "app"))
	e.setUp(t, pod)
	delete(e.objects.cms, "ns/app")
	if err := e.m.SetUpPod(context.Background(), pod); err != nil {
		t.Fatalf("a failed refresh of a set-up volume is not an error: %v", err)
	}
	if got := e.read(t, pod, "cfg", "k"); got != "v1" {
		t.Errorf("k = %q, want the old v1", got)
	}
	if events := e.rec.list(); len(events) != 1 || !strings.Contains(events[0], "FailedMount") {
		t.Errorf("events %q, want one FailedMount", events)
	}
}

func TestSecretVolumeIsOnATmpfsWithItsModes(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putSecret("ns", "creds", map[string][]byte{"user": []byte("admin"), "pass": []byte("hunter2")})
	pod := newPod("u1", corev1.Volume{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "creds", DefaultMode: ptr(int32(0o440)), Items: []corev1.KeyToPath{{Key: "pass", Path: "password", Mode: ptr(int32(0o400))}, {Key: "user", Path: "user"}},
	}}})
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: mustQ("64Mi")}
	e.setUp(t, pod)
	v := e.m.PodVolumes(pod.UID)["sec"]
	if size, ok := e.tmpfsSize(v.HostPath); !ok || size != 64<<20 {
		t.Errorf("tmpfs %t size %d, want one the pod's memory limit (64Mi) big", ok, size)
	}
	if got := e.read(t, pod, "sec", "password"); got != "hunter2" {
		t.Errorf("password = %q", got)
	}
	if m := e.modeOf(t, pod, "sec", "password"); m != 0o400 {
		t.Errorf("password mode %v", m)
	}
	if m := e.modeOf(t, pod, "sec", "user"); m != 0o440 {
		t.Errorf("user mode %v", m)
	}
	missing := newPod("u2", corev1.Volume{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope"}}})
	if err := e.m.SetUpPod(context.Background(), missing); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), `secret "nope" not found`) {
		t.Errorf("missing secret: %v", err)
	}
}

func TestFSGroupOwnsTheFilesWithGroupRead(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another group needs root")
	}
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v"})
	pod := newPod("u1", cmVolume("cfg", "app", func(s *corev1.ConfigMapVolumeSource) { s.DefaultMode = ptr(int32(0o400)) }),
		corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr(int64(1234))}
	e.setUp(t, pod)
	if m := e.modeOf(t, pod, "cfg", "k"); m != 0o440 {
		t.Errorf("k mode %v, want 0440 (0400 plus group read)", m)
	}
	for _, p := range []string{
		filepath.Join(e.m.PodVolumes(pod.UID)["cfg"].HostPath, "k"),
		e.m.PodVolumes(pod.UID)["cfg"].HostPath,
		e.m.PodVolumes(pod.UID)["scratch"].HostPath,
	} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if gid := info.Sys().(*syscall.Stat_t).Gid; gid != 1234 {
			t.Errorf("%s group %d, want 1234", p, gid)
		}
		if info.IsDir() && info.Mode()&os.ModeSetgid == 0 {
			t.Errorf("%s is not setgid", p)
		}
	}
	// Unchanged content does not rewrite the files: modes stay as they are.
	before, _ := os.Readlink(filepath.Join(e.m.PodVolumes(pod.UID)["cfg"].HostPath, "..data"))
	e.setUp(t, pod)
	if after, _ := os.Readlink(filepath.Join(e.m.PodVolumes(pod.UID)["cfg"].HostPath, "..data")); after != before {
		t.Errorf("an unchanged configMap with fsGroup was written again (%s -> %s)", before, after)
	}
}

func TestFSGroupChangePolicyOnRootMismatchSkipsAMatchingRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another group needs root")
	}
	dir := t.TempDir()
	inner := filepath.Join(dir, "f")
	if err := os.WriteFile(inner, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, -1, 1234); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	policy := corev1.FSGroupChangeOnRootMismatch
	sc := &corev1.PodSecurityContext{FSGroup: ptr(int64(1234)), FSGroupChangePolicy: &policy}
	if err := setOwnership(dir, sc.FSGroup, sc, false); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(inner); info.Sys().(*syscall.Stat_t).Gid == 1234 {
		t.Error("OnRootMismatch walked a volume whose root already matched")
	}
	always := corev1.FSGroupChangeAlways
	sc.FSGroupChangePolicy = &always
	if err := setOwnership(dir, sc.FSGroup, sc, false); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(inner); info.Sys().(*syscall.Stat_t).Gid != 1234 || info.Mode().Perm() != 0o660 {
		t.Errorf("Always: file gid %d mode %v, want 1234 and 0660", info.Sys().(*syscall.Stat_t).Gid, info.Mode().Perm())
	}
}

func TestAfterARestartAVolumeOnDiskIsServedWhileItsObjectIsGone(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v1"})
	pod := newPod("u1", cmVolume("cfg", "app"))
	e.setUp(t, pod)
	// A new manager (the agent restarted) while the configMap is gone.
	restarted := New(newFakeObjects(), nil, nil, e.rec, e.clk, nil, logr.Discard(), Config{RootDir: e.root})
	if err := restarted.SetUpPod(context.Background(), pod); err != nil {
		t.Fatalf("a volume written before the restart: %v", err)
	}
	if v := restarted.PodVolumes(pod.UID)["cfg"]; v.HostPath != e.m.PodVolumes(pod.UID)["cfg"].HostPath || !v.ReadOnly {
		t.Fatalf("reconstructed %+v", v)
	}
	if events := e.rec.list(); len(events) != 1 || !strings.Contains(events[0], `configmap "app" not found`) {
		t.Errorf("events %q, want the failed refresh recorded", events)
	}
}

// countingNode counts the reads of the node's allocatable resources.
type countingNode struct {
	fakeNode
	reads *int
}

func (c countingNode) Allocatable() (corev1.ResourceList, error) {
	*c.reads++
	return c.fakeNode.Allocatable()
}

func TestARefreshOfAMountedTmpfsNeitherSizesNorMountsIt(t *testing.T) {
	e := newTestEnv(t)
	reads := 0
	e.m.node = countingNode{reads: &reads}
	e.objects.putSecret("ns", "creds", map[string][]byte{"k": []byte("v")})
	pod := newPod("u1", corev1.Volume{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}})
	e.setUp(t, pod)
	e.setUp(t, pod)
	e.m.Resync(context.Background())
	if e.tmpfsCalls != 1 || reads != 1 {
		t.Fatalf("%d tmpfs mounts and %d allocatable reads for a set-up and two refreshes, want 1 and 1", e.tmpfsCalls, reads)
	}
	// A tmpfs that went away is mounted again.
	e.mu.Lock()
	delete(e.tmpfs, e.m.PodVolumes(pod.UID)["sec"].HostPath)
	e.mu.Unlock()
	e.setUp(t, pod)
	if e.tmpfsCalls != 2 {
		t.Fatalf("%d tmpfs mounts after the tmpfs went away, want 2", e.tmpfsCalls)
	}
}
