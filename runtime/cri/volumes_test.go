package cri

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit/internal/mount"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// mountsByPath indexes a container config's mounts by container path.
func mountsByPath(cfg *runtimeapi.ContainerConfig) map[string]*runtimeapi.Mount {
	out := map[string]*runtimeapi.Mount{}
	for _, m := range cfg.GetMounts() {
		out[m.GetContainerPath()] = m
	}
	return out
}

// fakeVolumes is a runtime.VolumeGetter with volumes set by the test.
type fakeVolumes struct {
	mu   sync.Mutex
	pods map[types.UID]map[string]noderuntime.Volume
}

func (f *fakeVolumes) set(uid types.UID, vols map[string]noderuntime.Volume) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pods == nil {
		f.pods = map[types.UID]map[string]noderuntime.Volume{}
	}
	f.pods[uid] = vols
}

// PodVolumes implements runtime.VolumeGetter.
func (f *fakeVolumes) PodVolumes(uid types.UID) map[string]noderuntime.Volume {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]noderuntime.Volume{}
	for k, v := range f.pods[uid] {
		out[k] = v
	}
	return out
}

// withVolumeDir gives the pod one volume "data", a directory the fake
// volume manager made under the pod's directory.
func (e *testEnv) withVolumeDir(t *testing.T, vols *fakeVolumes, pod *corev1.Pod) string {
	t.Helper()
	dir := filepath.Join(mustPodDir(t, e.m, pod.UID), "volumes", "kubernetes.io~empty-dir", "data")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	vols.set(pod.UID, map[string]noderuntime.Volume{"data": {HostPath: dir, Dir: true}})
	return dir
}

func TestSyncPodMountsTheVolumesTheVolumeManagerSetUp(t *testing.T) {
	skipUnlessRoot(t)
	e := newTestEnv(t)
	vols := &fakeVolumes{}
	e.m.SetVolumeGetter(vols)
	pod := newPod("u1", "a")
	data := e.withVolumeDir(t, vols, pod)
	t.Cleanup(func() { _ = mount.CleanSubPaths(mustPodDir(t, e.m, pod.UID)) })
	hostDir := t.TempDir()
	cfgDir := t.TempDir()
	pod.Spec.Volumes = append(pod.Spec.Volumes,
		corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}},
		corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}})
	vols.set(pod.UID, map[string]noderuntime.Volume{
		"data": {HostPath: data, Dir: true}, "host": {HostPath: hostDir, Dir: true},
		"cfg": {HostPath: cfgDir, Dir: true, ReadOnly: true},
	})
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SUB", Value: "from-env"}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/sub", SubPath: "a/b", ReadOnly: true},
		{Name: "data", MountPath: "/expr", SubPathExpr: "$(SUB)"},
		{Name: "host", MountPath: "/host"},
		{Name: "cfg", MountPath: "/cfg"},
	}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	mounts := mountsByPath(e.rs.lastContainerConfig(t))
	subPaths := filepath.Join(mustPodDir(t, e.m, pod.UID), subPathsDir, "data", "a")
	checks := []struct {
		path, host, shows string
		readOnly          bool
	}{
		{"/data", data, data, false},
		{"/sub", filepath.Join(subPaths, "1"), filepath.Join(data, "a", "b"), true},
		{"/expr", filepath.Join(subPaths, "2"), filepath.Join(data, "from-env"), false},
		{"/host", hostDir, hostDir, false},
		{"/cfg", cfgDir, cfgDir, true},
	}
	for _, c := range checks {
		m := mounts[c.path]
		if m == nil || m.GetHostPath() != c.host || m.GetReadonly() != c.readOnly {
			t.Errorf("mount %s = %v, want host %s readonly %t", c.path, m, c.host, c.readOnly)
			continue
		}
		if info, err := os.Stat(c.shows); err != nil || !info.IsDir() {
			t.Errorf("%s was not created as a directory: %v", c.shows, err)
		} else if !sameFile(t, c.host, c.shows) {
			t.Errorf("mount %s: %s does not show %s", c.path, c.host, c.shows)
		}
	}
}

func TestVolumeNotSetUpFailsEveryContainerWithConfigError(t *testing.T) {
	cases := []struct {
		name, want string
		getter     noderuntime.VolumeGetter
	}{
		{"without a volume manager", "volume cfg: no volume manager is set (runtime.VolumeAware)", nil},
		{"with a volume manager that did not set it up", "volume cfg: not set up by the volume manager", &fakeVolumes{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tc.getter != nil {
				e.m.SetVolumeGetter(tc.getter)
			}
			pod := newPod("u1", "a", "b")
			pod.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}
			res := e.sync(t, pod)
			failed := failedSteps(res)
			for _, name := range []string{"a", "b"} {
				step := failed["StartContainer/"+name]
				if !errors.Is(step.Err, noderuntime.ErrConfig) || step.Message != tc.want {
					t.Errorf("container %s: err %v message %q, want ErrConfig and %q", name, step.Err, step.Message, tc.want)
				}
			}
			if reason, _ := res.Waiting("a"); reason != "CreateContainerConfigError" {
				t.Errorf("waiting reason = %q, want CreateContainerConfigError", reason)
			}
			if names := e.rs.createdNames(); len(names) != 0 {
				t.Errorf("created %v, want nothing", names)
			}
		})
	}
}

func TestVolumeMountRefusals(t *testing.T) {
	skipUnlessRoot(t)
	root := t.TempDir()
	vol := noderuntime.Volume{HostPath: filepath.Join(root, "vol"), Dir: true}
	if err := os.MkdirAll(vol.HostPath, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(vol.HostPath, "escape")); err != nil {
		t.Fatal(err)
	}
	file := noderuntime.Volume{HostPath: filepath.Join(root, "f")}
	podDir := newSubPathPodDir(t)
	cases := []struct {
		name string
		vm   corev1.VolumeMount
		vols podVolumes
		want string
	}{
		{"an absolute subPath", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "/etc"}, podVolumes{podDir: podDir, byName: map[string]noderuntime.Volume{"v": vol}}, "must be a relative path"},
		{"a subPath with ..", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "a/../../x"}, podVolumes{podDir: podDir, byName: map[string]noderuntime.Volume{"v": vol}}, "must not contain '..'"},
		{"a subPath through a symlink out of the volume", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "escape"}, podVolumes{podDir: podDir, byName: map[string]noderuntime.Volume{"v": vol}}, "outside the volume"},
		{"a new subPath below a symlink out of the volume", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "escape/nodekit-test-new"}, podVolumes{podDir: podDir, byName: map[string]noderuntime.Volume{"v": vol}}, "outside the volume"},
		{"a subPath into a file volume", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "x"}, podVolumes{podDir: podDir, byName: map[string]noderuntime.Volume{"v": file}}, "not a directory"},
		{"a mount of a volume the pod lacks", corev1.VolumeMount{Name: "nope", MountPath: "/m"}, podVolumes{}, "names no volume"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "a", VolumeMounts: []corev1.VolumeMount{tc.vm}}
			_, err := containerMounts(c, tc.vols, func(string) (string, bool) { return "", false })
			if !errors.Is(err, noderuntime.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrConfig containing %q", err, tc.want)
			}
		})
	}
	c := &corev1.Container{Name: "a", VolumeDevices: []corev1.VolumeDevice{{Name: "v", DevicePath: "/dev/x"}}}
	if _, err := containerMounts(c, podVolumes{}, nil); !errors.Is(err, noderuntime.ErrConfig) {
		t.Fatalf("volumeDevices: err = %v, want ErrConfig", err)
	}
}

func TestNewSubPathDirectoriesGetTheVolumeRootsModeAndGroup(t *testing.T) {
	skipUnlessRoot(t)
	root := filepath.Join(t.TempDir(), "vol")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	// An emptyDir with an fsGroup: setgid (and, on tmpfs, sticky) 0777.
	want := os.ModeDir | os.ModeSetgid | os.ModeSticky | 0o777
	if err := os.Chmod(root, want&^os.ModeDir); err != nil {
		t.Fatal(err)
	}
	gid := os.Getegid()
	if err := os.Chown(root, -1, gid); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	target := bindTestSubPath(t, noderuntime.Volume{HostPath: root, Dir: true}, "a/b")
	got := filepath.Join(root, "a", "b")
	if !sameFile(t, target, got) {
		t.Fatalf("subPath mount %s is not %s", target, got)
	}
	for _, dir := range []string{filepath.Join(root, "a"), got} {
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", dir, info.Mode(), want)
		}
		if st := info.Sys().(*syscall.Stat_t); int(st.Gid) != gid {
			t.Errorf("%s: gid %d, want the volume's %d", dir, st.Gid, gid)
		}
	}
	// An existing directory is left as it is.
	if err := os.Chmod(got, 0o700); err != nil {
		t.Fatal(err)
	}
	bindTestSubPath(t, noderuntime.Volume{HostPath: root, Dir: true}, "a/b")
	if info, _ := os.Stat(got); info.Mode().Perm() != 0o700 {
		t.Errorf("existing subPath mode changed to %v", info.Mode())
	}
}

func TestGarbageCollectRemovesPodDirectoriesOfRemovedPodsOnly(t *testing.T) {
	e := newTestEnv(t)
	vols := &fakeVolumes{}
	e.m.SetVolumeGetter(vols)
	withVolume := func(uid string) *corev1.Pod {
		pod := newPod(uid, "a")
		e.withVolumeDir(t, vols, pod)
		return pod
	}
	gone, runs := withVolume("gone"), withVolume("runs")
	for _, pod := range []*corev1.Pod{gone, runs} {
		if err := e.sync(t, pod).Error(); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := e.m.KillPod(ctx, gone, e.status(t, gone).ToPod(), nil); err != nil {
		t.Fatal(err)
	}
	// A directory of a pod with nothing in the runtime, one of another
	// agent sharing the root directory, and one of a pod still known.
	orphan := filepath.Join(e.cfg.RootDir, "pods", "orphan")
	other := filepath.Join(e.cfg.RootDir, "pods", "other")
	for dir, owner := range map[string]string{orphan: testInstance, other: "node-b"} {
		if err := os.MkdirAll(filepath.Join(dir, "volumes"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, instanceFile), []byte(owner), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed := func(uid types.UID) bool { return uid != "runs" }
	if err := e.m.GarbageCollect(ctx, removed); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	for dir, want := range map[string]bool{
		mustPodDir(t, e.m, "gone"): false, orphan: false,
		mustPodDir(t, e.m, "runs"): true, other: true,
	} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s exists = %t, want %t", dir, err == nil, want)
		}
	}
	// Everything removed: a running removed pod keeps its directory.
	if err := e.m.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if _, err := os.Stat(mustPodDir(t, e.m, "runs")); err != nil {
		t.Errorf("the directory of a pod that still runs was removed: %v", err)
	}
}

func TestGarbageCollectUnmountsWhatIsMountedInThePodDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	e := newTestEnv(t)
	vols := &fakeVolumes{}
	e.m.SetVolumeGetter(vols)
	pod := newPod("u1", "a")
	dir := e.withVolumeDir(t, vols, pod)
	if err := mount.EnsureTmpfs(dir, 1<<20); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mount.UnmountBelow(mustPodDir(t, e.m, "u1")) })
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mountLine(t, real), " - tmpfs ") {
		t.Fatalf("no tmpfs on %s", real)
	}
	ctx := context.Background()
	if err := e.m.KillPod(ctx, pod, e.status(t, pod).ToPod(), nil); err != nil {
		t.Fatal(err)
	}
	if err := e.m.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if mountLine(t, real) != "" {
		t.Fatal("the tmpfs is still mounted")
	}
	if _, err := os.Stat(mustPodDir(t, e.m, "u1")); !os.IsNotExist(err) {
		t.Fatalf("pod directory still there: %v", err)
	}
}

func mountInfoText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mountLine(t *testing.T, dir string) string {
	t.Helper()
	for _, l := range strings.Split(mountInfoText(t), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == dir {
			return l
		}
	}
	return ""
}

// holdingVolumes is a fakeVolumes that is a runtime.VolumeHolder of the
// pods in held.
type holdingVolumes struct {
	fakeVolumes
	held map[types.UID]bool
}

func (h *holdingVolumes) PodVolumesExist(uid types.UID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[uid]
}

func TestGarbageCollectLeavesThePodDirectoryWhileTheVolumeManagerHoldsItsVolumes(t *testing.T) {
	e := newTestEnv(t)
	vols := &holdingVolumes{held: map[types.UID]bool{"held": true}}
	e.m.SetVolumeGetter(vols)
	for _, uid := range []string{"held", "free"} {
		dir := mustPodDir(t, e.m, types.UID(uid))
		if err := os.MkdirAll(filepath.Join(dir, "volumes"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, instanceFile), []byte(testInstance), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	all := func(types.UID) bool { return true }
	if err := e.m.GarbageCollect(context.Background(), all); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if _, err := os.Stat(mustPodDir(t, e.m, "held")); err != nil {
		t.Fatalf("the directory of a pod whose volumes are held was removed: %v", err)
	}
	if _, err := os.Stat(mustPodDir(t, e.m, "free")); !os.IsNotExist(err) {
		t.Fatalf("the directory of a pod whose volumes are not held is still there: %v", err)
	}
	vols.mu.Lock()
	delete(vols.held, "held")
	vols.mu.Unlock()
	if err := e.m.GarbageCollect(context.Background(), all); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if _, err := os.Stat(mustPodDir(t, e.m, "held")); !os.IsNotExist(err) {
		t.Fatalf("the directory is still there once its volumes were released: %v", err)
	}
}
