package volumes

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/internal/mount"
)

func TestEmptyDirIsWorldWritableAndMemoryOnesAreTmpfs(t *testing.T) {
	e := newTestEnv(t)
	size := mustQ("4Mi")
	pod := newPod("u1",
		corev1.Volume{Name: "disk", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &size}}},
		corev1.Volume{Name: "mem-node", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
	)
	e.setUp(t, pod)
	vols := e.m.PodVolumes(pod.UID)
	disk := vols["disk"]
	if want := filepath.Join(e.root, "pods", "u1", "volumes", "kubernetes.io~empty-dir", "disk"); disk.HostPath != want || !disk.Dir || disk.ReadOnly {
		t.Errorf("disk = %+v, want a writable directory at %s", disk, want)
	}
	if info, err := os.Stat(disk.HostPath); err != nil || info.Mode().Perm() != 0o777 {
		t.Errorf("emptyDir mode %v (%v), want 0777", info.Mode().Perm(), err)
	}
	if _, ok := e.tmpfsSize(disk.HostPath); ok {
		t.Error("a disk emptyDir got a tmpfs")
	}
	if info, err := os.Stat(vols["mem"].HostPath); err != nil || info.Mode()&(os.ModePerm|os.ModeSticky) != os.ModeSticky|0o777 {
		t.Errorf("memory emptyDir mode %v (%v), want 1777 like a tmpfs root the kubelet mounts", info.Mode(), err)
	}
	if info, err := os.Stat(disk.HostPath); err != nil || info.Mode()&os.ModeSticky != 0 {
		t.Errorf("disk emptyDir mode %v (%v), want no sticky bit", info.Mode(), err)
	}
	if size, ok := e.tmpfsSize(vols["mem"].HostPath); !ok || size != 4<<20 {
		t.Errorf("mem tmpfs %t size %d, want the sizeLimit 4Mi", ok, size)
	}
	if size, _ := e.tmpfsSize(vols["mem-node"].HostPath); size != 8<<30 {
		t.Errorf("mem-node tmpfs size %d, want the node's allocatable 8Gi", size)
	}
}

func TestUnsupportedVolumeTypesFailSayingSo(t *testing.T) {
	cases := map[string]corev1.VolumeSource{
		"volume type persistentVolumeClaim is not supported by nodekit": {PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}},
		`emptyDir medium "HugePages" is not supported by nodekit`:       {EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}},
	}
	for want, src := range cases {
		t.Run(want, func(t *testing.T) {
			e := newTestEnv(t)
			err := e.m.SetUpPod(context.Background(), newPod("u1", corev1.Volume{Name: "v", VolumeSource: src}))
			if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
		})
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
			got, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: tc.path, Type: &typ})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.HostPath != tc.path || got.Dir != tc.wantDir {
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

func TestTearDownRemovesTheVolumesAndForgetsTheTokens(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v"})
	host := t.TempDir()
	pod := newPod("u1", cmVolume("cfg", "app"),
		corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: host}}})
	e.setUp(t, pod)
	if err := e.m.TearDownPod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", "u1", "volumes")); !os.IsNotExist(err) {
		t.Errorf("volumes directory still there: %v", err)
	}
	if _, err := os.Stat(host); err != nil {
		t.Errorf("a hostPath must survive its pod: %v", err)
	}
	if len(e.m.PodVolumes(pod.UID)) != 0 || e.objects.registered["u1"] != 0 {
		t.Errorf("after tear-down: volumes %v, registered %d", e.m.PodVolumes(pod.UID), e.objects.registered["u1"])
	}
	if len(e.tokens.forgotten) != 1 || e.tokens.forgotten[0] != "u1" {
		t.Errorf("tokens forgotten for %v, want the pod's", e.tokens.forgotten)
	}
	if err := e.m.TearDownPod(context.Background(), pod); err != nil {
		t.Errorf("a second tear-down: %v", err)
	}
}

func TestCleanupPodsTearsDownOnlyRemovedPods(t *testing.T) {
	e := newTestEnv(t)
	scratch := corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	gone, kept := newPod("gone", scratch), newPod("kept", scratch)
	e.setUp(t, gone)
	e.setUp(t, kept)
	if err := e.m.CleanupPods(context.Background(), func(uid types.UID) bool { return uid == "gone" }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", "gone", "volumes")); !os.IsNotExist(err) {
		t.Errorf("volumes of a removed pod still there: %v", err)
	}
	if len(e.m.PodVolumes("kept")) != 1 {
		t.Error("the volumes of a pod still there were torn down")
	}
}

// newTmpfsSecretEnv is a volume manager that mounts real tmpfs volumes
// (as root), and a pod with one secret volume "sec"; whatever is left
// mounted below the pods' directory is unmounted at cleanup.
func newTmpfsSecretEnv(t *testing.T) (*testEnv, *corev1.Pod) {
	t.Helper()
	needRoot(t)
	e := newTestEnv(t)
	e.m.tmpfs = mount.EnsureTmpfs
	e.m.tmpfsMounted = mount.IsTmpfsMountPoint
	e.objects.putSecret("ns", "creds", map[string][]byte{"k": []byte("v")})
	pod := newPod("u1", corev1.Volume{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}})
	t.Cleanup(func() { _ = mount.UnmountBelow(filepath.Join(e.root, "pods")) })
	return e, pod
}

func TestRealTmpfsIsUnmountedOnTearDown(t *testing.T) {
	e, pod := newTmpfsSecretEnv(t)
	e.setUp(t, pod)
	e.setUp(t, pod) // a second set-up must not mount again
	dir, err := filepath.EvalSymlinks(e.m.PodVolumes(pod.UID)["sec"].HostPath)
	if err != nil {
		t.Fatal(err)
	}
	points, err := mount.Points()
	if err != nil || !points[dir] || !mount.IsTmpfsMountPoint(dir) {
		t.Fatalf("no tmpfs on %s (%v)", dir, err)
	}
	if mount.IsTmpfsMountPoint(filepath.Dir(dir)) {
		t.Fatalf("%s is not a tmpfs mount point but is seen as one", filepath.Dir(dir))
	}
	if got := e.read(t, pod, "sec", "k"); got != "v" {
		t.Errorf("k = %q", got)
	}
	if err := e.m.TearDownPod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if points, _ := mount.Points(); points[dir] {
		t.Fatal("the tmpfs is still mounted after tear-down")
	}
}

func TestTheVolumeManagerHoldsAPodUntilTearDownWhichRemovesAnEmptyPodDirectory(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	other := newPod("u2", corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	e.setUp(t, pod)
	e.setUp(t, other)
	if !e.m.PodVolumesExist("u1") || e.m.PodVolumesExist("u3") {
		t.Fatal("PodVolumesExist: want the set-up pod held and no other")
	}
	// The runtime keeps a file of its own in u2's directory.
	kept := filepath.Join(e.root, "pods", "u2", "nodekit-instance")
	if err := os.WriteFile(kept, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{pod, other} {
		if err := e.m.TearDownPod(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if e.m.PodVolumesExist("u1") {
		t.Error("the pod is still held after tear-down")
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", "u1")); !os.IsNotExist(err) {
		t.Errorf("the empty pod directory is still there: %v", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a pod directory with the runtime's files was removed: %v", err)
	}
}

func TestDiskOnlyMountsNothing(t *testing.T) {
	e := newTestEnv(t)
	e.m.cfg.DiskOnly = true
	e.objects.putSecret("ns", "creds", map[string][]byte{"k": []byte("v")})
	pod := newPod("u1",
		corev1.Volume{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
		corev1.Volume{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	e.setUp(t, pod)
	if e.tmpfsCalls != 0 {
		t.Fatalf("%d tmpfs mounts with DiskOnly, want none", e.tmpfsCalls)
	}
	if got := e.read(t, pod, "sec", "k"); got != "v" {
		t.Errorf("k = %q, want v", got)
	}
	if info, err := os.Stat(e.m.PodVolumes(pod.UID)["mem"].HostPath); err != nil || info.Mode().Perm() != 0o777 {
		t.Errorf("memory emptyDir: %v, %v; want a world-writable directory", info, err)
	}
}

// PodVolumeDirs lists the volumes the stats report, by name with their
// directory: every set-up volume but hostPath.
func TestPodVolumeDirsLeavesHostPathOut(t *testing.T) {
	e := newTestEnv(t)
	host := t.TempDir()
	pod := newPod("u1",
		corev1.Volume{Name: "disk", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: host}}},
	)
	e.setUp(t, pod)
	dirs := e.m.PodVolumeDirs(pod.UID)
	if want := filepath.Join(e.root, "pods", "u1", "volumes", "kubernetes.io~empty-dir", "disk"); len(dirs) != 1 || dirs["disk"] != want {
		t.Errorf("PodVolumeDirs = %v, want only disk at %s", dirs, want)
	}
	if got := e.m.PodVolumeDirs(types.UID("unknown")); len(got) != 0 {
		t.Errorf("PodVolumeDirs of an unknown pod = %v", got)
	}
}

// The kubelet cleans a volume's subPath mounts before it unmounts the
// volume; a subPath bind mount left behind would keep a tmpfs (and its
// memory) alive after the pod is gone. The mount here stands in for the
// one the runtime makes under <pod>/volume-subpaths.
func TestTearDownRemovesTheSubPathMountsOfThePod(t *testing.T) {
	e, pod := newTmpfsSecretEnv(t)
	e.setUp(t, pod)
	src := e.m.PodVolumes(pod.UID)["sec"].HostPath
	target := filepath.Join(e.root, "pods", string(pod.UID), mount.SubPathsDir, "sec", "main", "0")
	if err := os.MkdirAll(target, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(src, target, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount: %v", err)
	}
	if err := e.m.TearDownPod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	points, err := mount.Points()
	if err != nil {
		t.Fatal(err)
	}
	for p := range points {
		if strings.Contains(p, string(pod.UID)) && strings.HasPrefix(p, e.root) {
			t.Errorf("%s is still mounted after tear-down", p)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", string(pod.UID), mount.SubPathsDir)); !os.IsNotExist(err) {
		t.Errorf("%s still there after tear-down: %v", mount.SubPathsDir, err)
	}
}
