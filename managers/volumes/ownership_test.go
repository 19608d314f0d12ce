package volumes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/internal/mount"
)

// fsGroupOther is a group the test process is not in, so that a change of
// group shows.
const fsGroupOther = 4242

func statOf(t *testing.T, p string) (os.FileMode, uint32) {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode(), info.Sys().(*syscall.Stat_t).Gid
}

func TestOwnershipWalkNeverChangesAFileASwappedInSymlinkPointsAt(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another group needs root")
	}
	outside := filepath.Join(t.TempDir(), "host-file")
	if err := os.WriteFile(outside, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	vol := t.TempDir()
	// Swappers, each exchanging one entry of the volume with a symlink to
	// the host file kept beside the volume (same file system), one
	// renameat2(RENAME_EXCHANGE) a flip, so that every name always
	// exists; plain files around them that the walk must still reach.
	const swapped, plain = 4, 8
	for i := 0; i < plain; i++ {
		if err := os.WriteFile(filepath.Join(vol, fmt.Sprintf("plain-%d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	staging := t.TempDir()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var files []*os.File // the swapped files, wherever they are
	for i := 0; i < swapped; i++ {
		name, link := filepath.Join(vol, fmt.Sprintf("swap-%d", i)), filepath.Join(staging, fmt.Sprintf("link-%d", i))
		f, err := os.OpenFile(name, os.O_CREATE|os.O_RDONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// A file system without RENAME_EXCHANGE would swap nothing.
			for range 2 {
				if err := unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
					t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
				}
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_ = unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
			}
		}()
	}
	var walkErr error
	for i := 0; i < 1000 && walkErr == nil; i++ {
		// A file that has the bits already is not changed again: take
		// them away, through the file's own descriptor.
		for _, f := range files {
			if err := f.Chmod(0o600); err != nil {
				t.Fatal(err)
			}
		}
		walkErr = setOwnership(vol, ptr(int64(fsGroupOther)), nil, false)
		if mode, _ := statOf(t, outside); mode.Perm() != 0o600 {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if walkErr != nil {
		t.Fatalf("setOwnership: %v", walkErr)
	}
	if mode, gid := statOf(t, outside); mode.Perm() != 0o600 || gid == fsGroupOther {
		t.Fatalf("the host file behind a swapped-in symlink is now mode %v group %d, want 0600 and its own group", mode.Perm(), gid)
	}
	if mode, gid := statOf(t, filepath.Join(vol, "plain-0")); mode.Perm() != 0o660 || gid != fsGroupOther {
		t.Errorf("a file of the volume is mode %v group %d, want 0660 and %d", mode.Perm(), gid, fsGroupOther)
	}
}

func TestOwnershipWalkDoesNotFollowASymlinkedDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another group needs root")
	}
	outsideDir := t.TempDir()
	outside := filepath.Join(outsideDir, "f")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	vol := t.TempDir()
	if err := os.Symlink(outsideDir, filepath.Join(vol, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(vol, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := setOwnership(vol, ptr(int64(fsGroupOther)), nil, false); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{outsideDir, outside} {
		if _, gid := statOf(t, p); gid == fsGroupOther {
			t.Errorf("%s outside the volume got the fsGroup", p)
		}
	}
	if _, gid := statOf(t, filepath.Join(vol, "d")); gid != fsGroupOther {
		t.Errorf("the symlink itself has group %d, want %d (lchown)", gid, fsGroupOther)
	}
	if mode, gid := statOf(t, filepath.Join(vol, "sub")); mode&os.ModeSetgid == 0 || mode.Perm() != 0o770 || gid != fsGroupOther {
		t.Errorf("a directory of the volume is %v group %d, want setgid 0770 and %d", mode, gid, fsGroupOther)
	}
}

func TestAnEmptyDirFoundAgainAfterARestartIsNotWalkedAgain(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another group needs root")
	}
	e := newTestEnv(t)
	pod := newPod("u1", corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr(int64(fsGroupOther))}
	e.setUp(t, pod)
	dir := e.m.PodVolumes(pod.UID)["scratch"].HostPath
	if _, gid := statOf(t, dir); gid != fsGroupOther {
		t.Fatalf("the new emptyDir has group %d, want the fsGroup %d", gid, fsGroupOther)
	}
	// A container writes a private file; the agent restarts while the
	// pod runs.
	private := filepath.Join(dir, "private")
	if err := os.WriteFile(private, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(private, -1, 0); err != nil {
		t.Fatal(err)
	}
	restarted := New(e.objects, e.tokens, fakeNode{}, e.rec, e.clk, nil, logr.Discard(), Config{RootDir: e.root})
	restarted.tmpfs, restarted.tmpfsMounted = e.m.tmpfs, e.m.tmpfsMounted
	if err := restarted.SetUpPod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if got := restarted.PodVolumes(pod.UID)["scratch"].HostPath; got != dir {
		t.Fatalf("after the restart the volume is %q, want %q", got, dir)
	}
	if mode, gid := statOf(t, private); mode.Perm() != 0o600 || gid != 0 {
		t.Errorf("after the restart the container's file is mode %v group %d: the volume was walked again", mode.Perm(), gid)
	}
	// Torn down and set up again (a new pod of the same UID cannot be,
	// but the marker must go with the volume): walked anew.
	if err := restarted.TearDownPod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", "u1")); !os.IsNotExist(err) {
		t.Errorf("the pod directory is left after the tear-down (stat: %v)", err)
	}
}

func TestOwnershipWalkDoesNotEnterAFileSystemMountedInTheVolume(t *testing.T) {
	needRoot(t)
	vol := t.TempDir()
	inner := filepath.Join(vol, "mnt")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mount.EnsureTmpfs(inner, 1<<20); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = mount.UnmountBelow(vol) })
	mounted := filepath.Join(inner, "f")
	if err := os.WriteFile(mounted, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := setOwnership(vol, ptr(int64(fsGroupOther)), nil, false); err != nil {
		t.Fatal(err)
	}
	if mode, gid := statOf(t, mounted); mode.Perm() != 0o600 || gid == fsGroupOther {
		t.Errorf("a file of a file system mounted in the volume is mode %v group %d: the walk left the volume", mode.Perm(), gid)
	}
	if _, gid := statOf(t, vol); gid != fsGroupOther {
		t.Errorf("the volume root has group %d, want %d", gid, fsGroupOther)
	}
}
