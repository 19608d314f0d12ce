//go:build linux

package cri

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"

	"github.com/nodekit/nodekit/internal/mount"
)

// inodes is the set of the inodes of dir and everything below it, not
// following symlinks.
func inodes(t *testing.T, dir string) map[uint64]string {
	t.Helper()
	out := map[uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[info.Sys().(*syscall.Stat_t).Ino] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSubPathRaceWithASymlinkSwapStaysInTheVolume has a goroutine swap a
// component of the subPath between a directory and a symlink to a
// directory outside the volume, atomically and in a tight loop, while the
// subPath is set up many times with a new directory to create each time
// (Mkdir and then a chmod to the volume's mode). The outside directory
// must get no entry and keep its mode, and every mount made must be a
// directory of the volume.
func TestSubPathRaceWithASymlinkSwapStaysInTheVolume(t *testing.T) {
	skipUnlessRoot(t)
	base := t.TempDir()
	root, outside := filepath.Join(base, "vol"), filepath.Join(base, "outside")
	for dir, mode := range map[string]os.FileMode{root: 0o777 | os.ModeSetgid, outside: 0o700} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
	}
	sw, alt := filepath.Join(root, "sw"), filepath.Join(root, "alt")
	if err := os.Mkdir(sw, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, alt); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, sw, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
			swaps.Add(1)
		}
	}()
	podDir := newSubPathPodDir(t)
	vol := noderuntime.Volume{HostPath: root, Dir: true}
	var targets []string
	refused := 0
	const rounds = 1000
	for i := 0; i < rounds; i++ {
		target, err := subPath(vol, "sw/new"+strconv.Itoa(i), podDir, "c", "v", i)
		if err != nil {
			if !strings.Contains(err.Error(), "outside the volume") {
				t.Errorf("round %d: %v", i, err)
			}
			refused++
			continue
		}
		targets = append(targets, target)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d swaps, %d mounts, %d refused", swaps.Load(), len(targets), refused)
	if info, err := os.Stat(outside); err != nil || info.Mode() != os.ModeDir|0o700 {
		t.Errorf("outside directory: %v, %v; want drwx------", info.Mode(), err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("the subPath setup made %d entries outside the volume, such as %s", len(entries), entries[0].Name())
	}
	inVolume := inodes(t, root)
	for _, target := range targets {
		var st syscall.Stat_t
		if err := syscall.Stat(target, &st); err != nil {
			t.Fatal(err)
		}
		if _, ok := inVolume[st.Ino]; !ok || st.Ino == inodeOf(t, outside) {
			t.Errorf("mount %s is not a directory of the volume", target)
		}
	}
	if len(targets) == 0 {
		t.Error("no subPath was set up: the test shows nothing")
	}
}

func inodeOf(t *testing.T, p string) uint64 {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Ino
}

// TestSubPathIsABindMountOfWhatWasOpened checks the mount the runtime gets:
// a bind mount under the pod's directory at the kubelet's place, of the
// subPath as it was when opened, even if a symlink replaces the path later.
func TestSubPathIsABindMountOfWhatWasOpened(t *testing.T) {
	skipUnlessRoot(t)
	base := t.TempDir()
	root, outside := filepath.Join(base, "vol"), filepath.Join(base, "outside")
	for _, dir := range []string{filepath.Join(root, "a", "b"), outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink inside the volume is followed.
	if err := os.Symlink("a", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	podDir := newSubPathPodDir(t)
	vol := noderuntime.Volume{HostPath: root, Dir: true}
	target, err := subPath(vol, "link/b", podDir, "web", "data", 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(podDir, "volume-subpaths", "data", "web", "3"); target != want {
		t.Fatalf("target %s, want %s", target, want)
	}
	if !sameFile(t, target, filepath.Join(root, "a", "b")) {
		t.Fatal("the mount is not the subPath")
	}
	// The path is swapped for a symlink out of the volume: the mount
	// stays on the directory opened.
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "a-moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if !sameFile(t, target, filepath.Join(root, "a-moved", "b")) {
		t.Fatal("the mount followed the swapped path")
	}
	// Starting again re-checks the path: now it leaves the volume.
	if _, err := subPath(vol, "link/b", podDir, "web", "data", 3); err == nil || !strings.Contains(err.Error(), "outside the volume") {
		t.Fatalf("err = %v, want outside the volume", err)
	}
	// A file subPath gets a file target, here through the symlinks of an
	// atomically written (configMap) volume: key -> ..data/key,
	// ..data -> a-moved.
	if err := os.Symlink("a-moved", filepath.Join(root, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/file", filepath.Join(root, "key")); err != nil {
		t.Fatal(err)
	}
	ft, err := subPath(vol, "key", podDir, "web", "data", 4)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ft); err != nil || string(b) != "x" {
		t.Fatalf("file subPath: %q, %v", b, err)
	}
}

// TestCleanSubPathsUnmountsBeforeRemoving checks that the subPath mounts
// of a pod are unmounted and their directories removed, and that what
// they show of the volume survives.
func TestCleanSubPathsUnmountsBeforeRemoving(t *testing.T) {
	skipUnlessRoot(t)
	root := filepath.Join(t.TempDir(), "vol")
	if err := os.MkdirAll(filepath.Join(root, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "keep", "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	podDir := t.TempDir()
	vol := noderuntime.Volume{HostPath: root, Dir: true}
	for i, c := range []string{"a", "b"} {
		if _, err := subPath(vol, "keep", podDir, c, "v", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := mount.CleanSubPaths(podDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(podDir, subPathsDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there: %v", subPathsDir, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "keep", "data")); err != nil || string(b) != "x" {
		t.Errorf("the volume's data: %q, %v", b, err)
	}
	if strings.Contains(mountInfoText(t), podDir) {
		t.Error("a subPath mount is left")
	}
}

// TestGarbageCollectUnmountsSubPathsBeforeRemovingThePod checks that the
// container GC of a removed pod unmounts its subPath mounts before it
// removes the pod's directory: a hostPath volume's file seen through a
// subPath mount survives the removal.
func TestGarbageCollectUnmountsSubPathsBeforeRemovingThePod(t *testing.T) {
	skipUnlessRoot(t)
	e := newTestEnv(t)
	vols := &fakeVolumes{}
	e.m.SetVolumeGetter(vols)
	hostDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(hostDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostDir, "sub", "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := newPod("u1", "a")
	pod.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/m", SubPath: "sub"}}
	vols.set(pod.UID, map[string]noderuntime.Volume{"host": {HostPath: hostDir, Dir: true}})
	podDir := mustPodDir(t, e.m, pod.UID)
	t.Cleanup(func() { _ = mount.CleanSubPaths(podDir) })
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(podDir, subPathsDir, "host", "a", "0")
	if mountLine(t, target) == "" {
		t.Fatalf("no subPath mount on %s", target)
	}
	ctx := context.Background()
	if err := e.m.KillPod(ctx, pod, e.status(t, pod).ToPod(), nil); err != nil {
		t.Fatal(err)
	}
	if err := e.m.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if mountLine(t, target) != "" {
		t.Error("the subPath mount is still there")
	}
	if _, err := os.Stat(podDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod directory still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(hostDir, "sub", "keep")); err != nil || string(b) != "x" {
		t.Fatalf("the hostPath file seen through the subPath was removed: %v", err)
	}
}

// TestRemovePodDirRemovesNothingThroughAMount: a mount below the pod's
// directory that is still there when it is to be removed stops the
// removal.
func TestRemovePodDirRemovesNothingThroughAMount(t *testing.T) {
	skipUnlessRoot(t)
	dir := t.TempDir()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "m")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mount.UnmountAll(target) })
	if err := noMountBelow(dir); err == nil || !strings.Contains(err.Error(), "still mounted") {
		t.Fatalf("noMountBelow = %v, want still mounted", err)
	}
	if err := mount.UnmountAll(target); err != nil {
		t.Fatal(err)
	}
	if err := noMountBelow(dir); err != nil {
		t.Fatalf("noMountBelow after unmount: %v", err)
	}
}
