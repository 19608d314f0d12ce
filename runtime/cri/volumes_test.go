package cri

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

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

func TestSyncPodMountsEmptyDirAndHostPathVolumes(t *testing.T) {
	e := newTestEnv(t)
	hostDir := filepath.Join(t.TempDir(), "made", "by", "agent")
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	pod := newPod("u1", "a")
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: &dirOrCreate}}},
	}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SUB", Value: "from-env"}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/sub", SubPath: "a/b", ReadOnly: true},
		{Name: "data", MountPath: "/expr", SubPathExpr: "$(SUB)"},
		{Name: "host", MountPath: "/host"},
	}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	emptyDir := filepath.Join(e.cfg.RootDir, "pods", "u1", "volumes", "kubernetes.io~empty-dir", "data")
	mounts := mountsByPath(e.rs.lastContainerConfig(t))
	checks := []struct {
		path, host string
		readOnly   bool
	}{
		{"/data", emptyDir, false},
		{"/sub", filepath.Join(emptyDir, "a", "b"), true},
		{"/expr", filepath.Join(emptyDir, "from-env"), false},
		{"/host", hostDir, false},
	}
	for _, c := range checks {
		m := mounts[c.path]
		if m == nil || m.GetHostPath() != c.host || m.GetReadonly() != c.readOnly {
			t.Errorf("mount %s = %v, want host %s readonly %t", c.path, m, c.host, c.readOnly)
			continue
		}
		if info, err := os.Stat(c.host); err != nil || !info.IsDir() {
			t.Errorf("%s was not created as a directory: %v", c.host, err)
		}
	}
	if info, err := os.Stat(emptyDir); err != nil || info.Mode().Perm() != 0o777 {
		t.Errorf("emptyDir mode = %v (%v), want 0777", info.Mode().Perm(), err)
	}
}

func TestHostPathTypeChecks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cases := []struct {
		name    string
		typ     corev1.HostPathType
		path    string
		wantErr string
		wantDir bool
	}{
		{name: "no type checks nothing, even a missing path", typ: corev1.HostPathUnset, path: filepath.Join(dir, "missing")},
		{name: "DirectoryOrCreate creates a missing directory", typ: corev1.HostPathDirectoryOrCreate, path: filepath.Join(dir, "new", "dir"), wantDir: true},
		{name: "DirectoryOrCreate refuses a file", typ: corev1.HostPathDirectoryOrCreate, path: file, wantErr: "is not a directory"},
		{name: "Directory accepts a directory", typ: corev1.HostPathDirectory, path: dir, wantDir: true},
		{name: "Directory refuses a missing path", typ: corev1.HostPathDirectory, path: filepath.Join(dir, "nope"), wantErr: "is not a directory"},
		{name: "FileOrCreate creates a missing file", typ: corev1.HostPathFileOrCreate, path: filepath.Join(dir, "made")},
		{name: "FileOrCreate does not create the parent directory", typ: corev1.HostPathFileOrCreate, path: filepath.Join(dir, "no", "file"), wantErr: "no such file"},
		{name: "File accepts a file", typ: corev1.HostPathFile, path: file},
		{name: "File refuses a directory", typ: corev1.HostPathFile, path: dir, wantErr: "is not a file"},
		{name: "Socket accepts a socket", typ: corev1.HostPathSocket, path: sock},
		{name: "Socket refuses a file", typ: corev1.HostPathSocket, path: file, wantErr: "is not a socket file"},
		{name: "CharDevice accepts /dev/null", typ: corev1.HostPathCharDev, path: "/dev/null"},
		{name: "BlockDevice refuses /dev/null", typ: corev1.HostPathBlockDev, path: "/dev/null", wantErr: "is not a block device"},
		{name: "an unknown type is refused", typ: "Pipe", path: file, wantErr: "not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ := tc.typ
			got, err := setupHostPath(&corev1.HostPathVolumeSource{Path: tc.path, Type: &typ})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.hostPath != tc.path || got.dir != tc.wantDir {
				t.Fatalf("got %+v, %v; want %s (dir %t)", got, err, tc.path, tc.wantDir)
			}
			if tc.typ == corev1.HostPathFileOrCreate {
				if _, err := os.Stat(tc.path); err != nil {
					t.Fatalf("file not created: %v", err)
				}
			}
		})
	}
}

func TestUnsupportedVolumeFailsEveryContainerWithConfigError(t *testing.T) {
	cases := []struct {
		name, want string
		src        corev1.VolumeSource
	}{
		{"a configMap volume", "volume cfg: type configMap is not supported yet",
			corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
		{"a secret volume", "volume cfg: type secret is not supported yet",
			corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}},
		{"a projected volume", "volume cfg: type projected is not supported yet",
			corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
		{"a persistentVolumeClaim", "volume cfg: type persistentVolumeClaim is not supported yet",
			corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
		{"an emptyDir on huge pages", `volume cfg: emptyDir medium "HugePages" is not supported yet`,
			corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			pod := newPod("u1", "a", "b")
			pod.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: tc.src}}
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
	root := t.TempDir()
	vol := podVolume{hostPath: filepath.Join(root, "vol"), dir: true}
	if err := os.MkdirAll(vol.hostPath, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(vol.hostPath, "escape")); err != nil {
		t.Fatal(err)
	}
	file := podVolume{hostPath: filepath.Join(root, "f")}
	cases := []struct {
		name string
		vm   corev1.VolumeMount
		vols podVolumes
		want string
	}{
		{"an absolute subPath", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "/etc"}, podVolumes{"v": vol}, "must be a relative path"},
		{"a subPath with ..", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "a/../../x"}, podVolumes{"v": vol}, "must not contain '..'"},
		{"a subPath through a symlink out of the volume", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "escape"}, podVolumes{"v": vol}, "outside the volume"},
		{"a subPath into a file volume", corev1.VolumeMount{Name: "v", MountPath: "/m", SubPath: "x"}, podVolumes{"v": file}, "not a directory"},
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

func TestGarbageCollectRemovesPodDirectoriesOfRemovedPodsOnly(t *testing.T) {
	e := newTestEnv(t)
	withVolume := func(uid string) *corev1.Pod {
		pod := newPod(uid, "a")
		pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
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
		e.m.podDir("gone"): false, orphan: false,
		e.m.podDir("runs"): true, other: true,
	} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s exists = %t, want %t", dir, err == nil, want)
		}
	}
	// Everything removed: a running removed pod keeps its directory.
	if err := e.m.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if _, err := os.Stat(e.m.podDir("runs")); err != nil {
		t.Errorf("the directory of a pod that still runs was removed: %v", err)
	}
}

func TestEmptyDirInMemoryIsATmpfsUnmountedOnRemoval(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	e := newTestEnv(t)
	size := resource.MustParse("1Mi")
	pod := newPod("u1", "a")
	pod.Spec.Volumes = []corev1.Volume{{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		Medium: corev1.StorageMediumMemory, SizeLimit: &size}}}}
	t.Cleanup(func() { _ = unmountBelow(e.m.podDir("u1")) })
	for range 2 { // the second sync must not mount it again
		if err := e.sync(t, pod).Error(); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := filepath.EvalSymlinks(e.m.emptyDirPath("u1", "mem"))
	if err != nil {
		t.Fatal(err)
	}
	line := mountLine(t, dir)
	if strings.Count(mountInfoText(t), " "+dir+" ") != 1 || !strings.Contains(line, " - tmpfs ") || !strings.Contains(line, "size=1024k") {
		t.Fatalf("want one tmpfs of 1Mi on %s, mountinfo line %q", dir, line)
	}
	ctx := context.Background()
	if err := e.m.KillPod(ctx, pod, e.status(t, pod).ToPod(), nil); err != nil {
		t.Fatal(err)
	}
	if err := e.m.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if mountLine(t, dir) != "" {
		t.Fatal("the tmpfs is still mounted")
	}
	if _, err := os.Stat(e.m.podDir("u1")); !os.IsNotExist(err) {
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
