//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// fillMiB is what the disk filler writes into its emptyDir.
const fillMiB = 160

// mountLoopRootDir puts the harness's root dir on an ext4 filesystem of
// size bytes in a file (mkfs.ext4, mount -o loop), without reserved
// blocks so that available is free space. Cleanup stops the agent,
// removes its sandboxes and volumes, then unmounts it.
func mountLoopRootDir(t *testing.T, h *agentHarness, size int64) {
	t.Helper()
	for _, tool := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			if isCI() {
				t.Fatalf("%s: %v", tool, err)
			}
			t.Skipf("%s: %v", tool, err)
		}
	}
	img := filepath.Join(t.TempDir(), "nodefs.img")
	f, err := os.Create(img)
	if err == nil {
		err = f.Truncate(size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	if err := os.MkdirAll(h.rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, h.rootDir).CombinedOutput(); err != nil {
		t.Fatalf("mount -o loop: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		// The agent must be gone and its volumes unmounted first; that
		// unmounts everything below the root dir, the root dir included.
		h.cleanup()
		var out []byte
		var err error
		for i := 0; i < 10 && isMountPoint(t, h.rootDir); i++ {
			if out, err = exec.Command("umount", h.rootDir).CombinedOutput(); err == nil {
				return
			}
			time.Sleep(time.Second)
		}
		if err != nil {
			t.Errorf("umount %s: %v\n%s", h.rootDir, err, out)
		}
	})
}

// isMountPoint reports whether path is on another device than its parent.
func isMountPoint(t *testing.T, path string) bool {
	var st, parent unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false
	}
	if err := unix.Stat(filepath.Dir(path), &parent); err != nil {
		t.Logf("stat %s: %v", filepath.Dir(path), err)
		return false
	}
	return st.Dev != parent.Dev
}

// fsAvailable is statfs's available bytes of the filesystem holding path.
func fsAvailable(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// podContainers lists the runtime's containers of the pod with uid.
func podContainers(t *testing.T, h *agentHarness, uid string) []*runtimeapi.Container {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := h.env.runtime(t).ListContainers(ctx, &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{noderuntime.LabelPodUID: uid}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// logLines is a shell pipeline printing n lines of 100 characters.
func logLines(n int) string {
	return fmt.Sprintf("yes %s | head -n %d", strings.Repeat("x", 100), n)
}

// TestDiskPressureReclaimsDeadContainersThenEvictsTheEmptyDirFiller is
// acceptance 2. The agent's root dir (pod volumes and container logs, the
// kubelet's nodefs) is a 320MiB loopback ext4; a soft nodefs.available
// threshold (grace 0s) lies fillMiB/2 below what it had free at start.
// Three API pods: "done" printed ~7MB of logs and exited (Succeeded: its
// dead container is what DeleteAllUnusedContainers reclaims), "quiet"
// idles, "filler" prints ~3MB of logs (so that its usage shows in the
// ranking even where the summary has no volume stats) then writes fillMiB
// into its emptyDir. DiskPressure must become True; before evicting, the
// manager reclaims dead containers (done's container and its log go),
// which is not enough, so it evicts the largest user, filler (Failed,
// Evicted, ephemeral-storage named, DisruptionTarget), not quiet; the
// filler's emptyDir is freed; a new pod is refused while DiskPressure
// holds; DiskPressure then returns to False and quiet still runs.
func TestDiskPressureReclaimsDeadContainersThenEvictsTheEmptyDirFiller(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	mountLoopRootDir(t, h, 320<<20)
	avail := fsAvailable(t, h.rootDir)
	threshold := avail - fillMiB<<20/2
	const transition = 30 * time.Second
	h.startWith(func(cfg *nodekit.Config) {
		cfg.EvictionHard = "none"
		cfg.Eviction.Soft = fmt.Sprintf("nodefs.available<%d", threshold)
		cfg.Eviction.SoftGracePeriod = map[string]string{"nodefs.available": "0s"}
		cfg.Eviction.MaxPodGracePeriodSeconds = 1
		cfg.Eviction.MonitoringInterval = time.Second
		cfg.Eviction.PressureTransitionPeriod = transition
	})
	t.Logf("nodefs %s: %d MiB available, threshold %d MiB, filling %d MiB", h.rootDir, avail>>20, threshold>>20, fillMiB)
	ctx := context.Background()
	create := func(p *corev1.Pod) *corev1.Pod {
		t.Helper()
		p, err := c.admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	done := h.shPod(ns, "done", logLines(50000))
	done.Spec.RestartPolicy = corev1.RestartPolicyNever
	done = create(done)
	create(h.apiPod(ns, "quiet", 0))
	waitAPIPod(t, c, ns, "done", 2*time.Minute, "success", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodSucceeded
	})
	waitAPIPod(t, c, ns, "quiet", 2*time.Minute, "running", apiRunning)
	// The reclaim removes every dead container of a pod whose worker has
	// terminated; done's worker stops the pod about a relist after its
	// phase turned Succeeded (as the kubelet's). The filler fills the disk
	// in a second, so it starts only once done is stopped.
	within(t, time.Minute, "the agent to stop the done pod", func() bool {
		return strings.Contains(h.logs.String(), `"msg"="Pod stopped" "pod"={"name"="done"`)
	})
	if n := len(podContainers(t, h, string(done.UID))); n != 1 {
		t.Fatalf("the done pod has %d containers in the runtime, want its 1 dead one", n)
	}
	doneLog := filepath.Join(h.rootDir, "logs", ns+"_done_"+string(done.UID), "main", "0.log")
	if _, err := os.Stat(doneLog); err != nil {
		t.Fatalf("done's log: %v", err)
	}
	if st, err := nodeCondition(c, h.node, corev1.NodeDiskPressure); err != nil || st == corev1.ConditionTrue {
		t.Fatalf("DiskPressure %q (%v) before the filler runs", st, err)
	}

	filler := h.shPod(ns, "filler", fmt.Sprintf("trap 'exit 0' TERM; %s; dd if=/dev/zero of=/scratch/fill bs=1M count=%d 2>/dev/null; sleep 3600 & wait",
		logLines(20000), fillMiB))
	filler.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	filler.Spec.Volumes = append(filler.Spec.Volumes, corev1.Volume{Name: "scratch",
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	filler = create(filler)

	waitNodeCondition(t, c, h.node, corev1.NodeDiskPressure, corev1.ConditionTrue, 3*time.Minute)
	p := waitAPIPod(t, c, ns, "filler", 2*time.Minute, "eviction", evictedPod)
	if !strings.Contains(p.Status.Message, "The node was low on resource: ephemeral-storage.") || !hasDisruptionTarget(p) {
		t.Errorf("filler status message %q conditions %+v", p.Status.Message, p.Status.Conditions)
	}
	if q, err := c.admin.CoreV1().Pods(ns).Get(ctx, "quiet", metav1.GetOptions{}); err != nil || q.Status.Phase != corev1.PodRunning {
		t.Errorf("quiet is not running after the filler's eviction: %s (%v)", describe(q), err)
	}
	t.Logf("filler evicted: %s", p.Status.Message)

	// A pod is refused while DiskPressure holds.
	if st, err := nodeCondition(c, h.node, corev1.NodeDiskPressure); err != nil || st != corev1.ConditionTrue {
		t.Fatalf("DiskPressure %q (%v) right after the eviction, within its %s transition period", st, err, transition)
	}
	create(h.apiPod(ns, "refused", 0))
	r := waitAPIPod(t, c, ns, "refused", time.Minute, "refusal", evictedPod)
	if !strings.Contains(r.Status.Message, "The node had condition: [DiskPressure]") {
		t.Errorf("refused pod message %q", r.Status.Message)
	}

	// The reclaim came first and removed done's dead container and log.
	logs := h.logs.String()
	reclaim, evict := strings.Index(logs, "eviction manager: reclaimed node-level resources"), strings.Index(logs, "eviction manager: evicting pod")
	if reclaim < 0 || evict < 0 || reclaim > evict {
		t.Errorf("no node-level reclaim before the eviction (reclaim at %d, eviction at %d)", reclaim, evict)
	} else {
		line := logs[reclaim:]
		line = line[:strings.IndexByte(line, '\n')]
		if !strings.Contains(line, `"deadContainers"=true`) || !strings.Contains(line, `"images"=false`) {
			t.Errorf("reclaim %s: want dead containers and no images (the image filesystem is another one)", line)
		}
		t.Logf("reclaim: %s", line)
	}
	if n := len(podContainers(t, h, string(done.UID))); n != 0 {
		t.Errorf("done's dead container is still in the runtime (%d) after the reclaim", n)
	}
	if _, err := os.Stat(doneLog); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("done's log is still there after the reclaim (%v)", err)
	}

	// The filler's emptyDir is freed.
	scratch := filepath.Join(h.rootDir, "pods", string(filler.UID), "volumes", "kubernetes.io~empty-dir", "scratch")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		_, err := os.Stat(scratch)
		now := fsAvailable(t, h.rootDir)
		if errors.Is(err, fs.ErrNotExist) && now > threshold {
			t.Logf("filler's emptyDir removed; %d MiB available", now>>20)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("filler's emptyDir %s still there (%v) or only %d MiB available", scratch, err, now>>20)
		}
	}

	// DiskPressure ends; quiet was never evicted.
	waitNodeCondition(t, c, h.node, corev1.NodeDiskPressure, corev1.ConditionFalse, 3*time.Minute)
	if q, err := c.admin.CoreV1().Pods(ns).Get(ctx, "quiet", metav1.GetOptions{}); err != nil || q.Status.Phase != corev1.PodRunning {
		t.Errorf("quiet is not running after DiskPressure ended: %s (%v)", describe(q), err)
	}
	// The eviction's status sticks (the filler's container exited 0 on
	// TERM afterwards: it must not turn the pod Succeeded).
	if f, err := c.admin.CoreV1().Pods(ns).Get(ctx, "filler", metav1.GetOptions{}); !evictedPod(f, err) {
		t.Errorf("the filler's eviction did not stick: %s (%v)", describe(f), err)
	}
}
