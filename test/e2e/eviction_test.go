//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit"
)

// TestMemoryPressureEvictsBestEffortFirstAndRefusesBestEffort makes memory
// pressure real for the agent: a soft memory.available threshold of the
// machine's whole memory (computed by the test), which is always crossed,
// with a 15s grace period so both API pods run before it acts. The
// BestEffort pod must be evicted (Failed, Evicted, a message naming
// memory, DisruptionTarget) before the Burstable one, MemoryPressure must
// be True on the node, and a new BestEffort pod must be refused.
func TestMemoryPressureEvictsBestEffortFirstAndRefusesBestEffort(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	total := memTotal()
	if total == 0 {
		t.Fatal("cannot read MemTotal")
	}
	h.startWith(func(cfg *nodekit.Config) {
		cfg.EvictionHard = "none"
		cfg.Eviction.Soft = fmt.Sprintf("memory.available<%d", total)
		cfg.Eviction.SoftGracePeriod = map[string]string{"memory.available": "15s"}
		cfg.Eviction.MaxPodGracePeriodSeconds = 2
		cfg.Eviction.MonitoringInterval = 2 * time.Second
		cfg.Eviction.PressureTransitionPeriod = 10 * time.Second
	})
	ctx := context.Background()
	be := h.apiPod(ns, "besteffort", 2)
	burst := h.apiPod(ns, "burstable", 2)
	burst.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}
	for _, p := range []*corev1.Pod{be, burst} {
		if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitAPIPod(t, c, ns, "besteffort", 2*time.Minute, "running", apiRunning)
	waitAPIPod(t, c, ns, "burstable", 2*time.Minute, "running", apiRunning)

	evicted := func(p *corev1.Pod, err error) bool { return err == nil && p.Status.Phase == corev1.PodFailed }
	first := waitAPIPod(t, c, ns, "besteffort", 2*time.Minute, "eviction", evicted)
	if p, err := c.admin.CoreV1().Pods(ns).Get(ctx, "burstable", metav1.GetOptions{}); err != nil || p.Status.Phase == corev1.PodFailed {
		t.Errorf("the Burstable pod failed together with or before the BestEffort one (%v)", err)
	}
	if first.Status.Reason != "Evicted" || !strings.Contains(first.Status.Message, "The node was low on resource: memory.") {
		t.Errorf("BestEffort status reason %q message %q", first.Status.Reason, first.Status.Message)
	}
	hasDisruption := false
	for _, cond := range first.Status.Conditions {
		hasDisruption = hasDisruption || cond.Type == corev1.DisruptionTarget && cond.Status == corev1.ConditionTrue
	}
	if !hasDisruption {
		t.Errorf("no DisruptionTarget condition: %+v", first.Status.Conditions)
	}
	second := waitAPIPod(t, c, ns, "burstable", 2*time.Minute, "eviction", evicted)
	t.Logf("evicted: besteffort (%s), then burstable (%s)", first.Status.Message, second.Status.Message)

	// MemoryPressure holds on the node.
	for deadline := time.Now().Add(time.Minute); ; {
		n, err := c.admin.CoreV1().Nodes().Get(ctx, h.node, metav1.GetOptions{})
		if err == nil && conditionTrue(n, corev1.NodeMemoryPressure) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("MemoryPressure never became True (%v)", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// A new BestEffort pod is refused.
	if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, h.apiPod(ns, "refused", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitAPIPod(t, c, ns, "refused", time.Minute, "refusal", evicted)
	if p.Status.Reason != "Evicted" || !strings.Contains(p.Status.Message, "The node had condition: [MemoryPressure]") {
		t.Errorf("refused pod reason %q message %q", p.Status.Reason, p.Status.Message)
	}
}

func conditionTrue(n *corev1.Node, typ corev1.NodeConditionType) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// holdMiB is what the memory holder puts into its tmpfs: large enough
// that other jobs on a shared machine moving memory.available by half of
// it is unlikely.
const holdMiB = 2048

// TestMemoryPressureEndsWhenTheHolderIsEvicted is acceptance 1's second
// half. The test reads the node's memory.available from the agent's own
// summary, restarts the agent with a soft memory.available threshold of
// that figure less holdMiB/2 (grace 0s, so it acts at the first pass
// below it), then runs a Burstable pod that writes holdMiB into a
// memory-backed emptyDir (tmpfs pages count in the root cgroup's working
// set). memory.available falls below the threshold: MemoryPressure must
// become True and the holder be evicted (Failed, Evicted, memory named,
// DisruptionTarget); its tmpfs is unmounted with its volumes, memory
// comes back, and MemoryPressure must return to False, not before the
// pressure transition period (15s) has run since the eviction.
func TestMemoryPressureEndsWhenTheHolderIsEvicted(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	avail := h.nodeMemoryAvailable()
	if avail < 3*holdMiB<<20 {
		t.Skipf("memory.available is %d MiB: too little to hold %d MiB safely", avail>>20, holdMiB)
	}
	h.stop()
	threshold := avail - holdMiB<<20/2
	const transition = 15 * time.Second
	h.startWith(func(cfg *nodekit.Config) {
		cfg.EvictionHard = "none"
		cfg.Eviction.Soft = fmt.Sprintf("memory.available<%d", threshold)
		cfg.Eviction.SoftGracePeriod = map[string]string{"memory.available": "0s"}
		cfg.Eviction.MaxPodGracePeriodSeconds = 1
		cfg.Eviction.MonitoringInterval = time.Second
		cfg.Eviction.PressureTransitionPeriod = transition
	})
	t.Logf("memory.available %d MiB, threshold %d MiB, holding %d MiB", avail>>20, threshold>>20, holdMiB)
	if st, err := nodeCondition(c, h.node, corev1.NodeMemoryPressure); err == nil && st == corev1.ConditionTrue {
		t.Fatal("MemoryPressure is True before the holder runs: the machine's free memory moved by more than half the margin")
	}

	ctx := context.Background()
	holder := h.shPod(ns, "holder", fmt.Sprintf("trap 'exit 0' TERM; dd if=/dev/zero of=/ram/fill bs=1M count=%d 2>/dev/null; sleep 3600 & wait", holdMiB))
	holder.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}
	holder.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "ram", MountPath: "/ram"}}
	holder.Spec.Volumes = append(holder.Spec.Volumes, corev1.Volume{Name: "ram",
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, holder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pressure comes, is reported, and the holder goes.
	waitNodeCondition(t, c, h.node, corev1.NodeMemoryPressure, corev1.ConditionTrue, 3*time.Minute)
	p := waitAPIPod(t, c, ns, "holder", 2*time.Minute, "eviction", evictedPod)
	evictedAt := time.Now()
	if !strings.Contains(p.Status.Message, "The node was low on resource: memory.") || !hasDisruptionTarget(p) {
		t.Errorf("holder status message %q conditions %+v", p.Status.Message, p.Status.Conditions)
	}
	t.Logf("holder evicted: %s", p.Status.Message)
	// Memory comes back: MemoryPressure returns to False, after the
	// transition period.
	falseAt := waitNodeCondition(t, c, h.node, corev1.NodeMemoryPressure, corev1.ConditionFalse, 3*time.Minute)
	// The pass that evicted observed the pressure: False may come only a
	// transition period after it.
	if passAt, ok := h.logTime("eviction manager: evicting pod"); !ok {
		t.Error("no eviction in the agent's log")
	} else if d := falseAt.Sub(passAt); d < transition-time.Second {
		t.Errorf("MemoryPressure turned False %s after the evicting pass, before the %s transition period", d, transition)
	}
	if p, err := c.admin.CoreV1().Pods(ns).Get(ctx, "holder", metav1.GetOptions{}); !evictedPod(p, err) {
		t.Errorf("the holder's eviction did not stick: %s (%v)", describe(p), err)
	}
	s, err := h.summary()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("MemoryPressure False %s after the eviction; memory.available now %d MiB", falseAt.Sub(evictedAt).Round(time.Second), *s.Node.Memory.AvailableBytes>>20)
}
