//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/managers/shutdown"
)

// testTrigger is the shutdown.Trigger the test fires, in place of logind.
type testTrigger struct {
	ch       chan bool
	released chan struct{}
}

func (tr *testTrigger) Watch(context.Context) (<-chan bool, error) { return tr.ch, nil }

func (tr *testTrigger) Release() error {
	select {
	case tr.released <- struct{}{}:
	default:
	}
	return nil
}

// criticalStaticPod is a static pod of system-node-critical priority
// whose container ignores SIGTERM, so it ends only when its grace period
// runs out.
func criticalStaticPod(image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: critical
spec:
  priorityClassName: system-node-critical
  priority: 2000001000
  terminationGracePeriodSeconds: 30
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap '' TERM; while true; do sleep 1; done"]
`, image)
}

// TestGracefulShutdownKillsRegularPodsFirstThenCriticalOnes joins an
// agent with a 12s shutdown grace period of which 4s are for critical
// pods, runs a regular API pod and a critical static pod (both ignore
// SIGTERM and ask for more grace than they get), and fires the test
// trigger: the node must turn NotReady ("node is shutting down"), a new
// pod must be refused (NodeShutdown), the regular pod must end after its
// 8s share and the critical pod must be killed when that share ran out and
// end within its 4s (container finishedAt, DisruptionTarget times),
// both Failed with the kubelet's reason, message and DisruptionTarget
// condition, a pod already being deleted with its own 60s must get the
// regular share instead, and the trigger must be released at the end.
func TestGracefulShutdownKillsRegularPodsFirstThenCriticalOnes(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	trig := &testTrigger{ch: make(chan bool), released: make(chan struct{}, 1)}
	h.writeManifest("critical.yaml", criticalStaticPod(h.env.Image))
	h.startWithOptions(func(cfg *nodekit.Config) {
		cfg.Server.SecurePort = freePort(t)
		cfg.Shutdown.GracePeriod = 12 * time.Second
		cfg.Shutdown.GracePeriodCriticalPods = 4 * time.Second
	}, fx.Decorate(func(shutdown.Trigger) shutdown.Trigger { return trig }))
	ctx := context.Background()

	for _, name := range []string{"regular", "deleting"} {
		p := h.apiPod(ns, name, 60)
		p.Spec.Containers[0].Command = []string{"sh", "-c", "trap '' TERM; while true; do sleep 1; done"}
		if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mirror := "critical-" + h.node
	waitAPIPod(t, c, ns, "regular", 2*time.Minute, "running", apiRunning)
	waitAPIPod(t, c, ns, "deleting", 2*time.Minute, "running", apiRunning)
	waitAPIPod(t, c, "default", mirror, 2*time.Minute, "mirror pod running", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
			p.Status.ContainerStatuses[0].State.Running != nil
	})
	waitNodeReadyCondition(t, c, h.node, corev1.ConditionTrue, "")

	// A pod being deleted with its own 60s is still active: the shutdown
	// shortens its grace period to the regular share, as the kubelet's.
	deleting, err := c.admin.CoreV1().Pods(ns).Get(ctx, "deleting", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.admin.CoreV1().Pods(ns).Delete(ctx, "deleting", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The pod workers log when they start terminating a pod.
	started := fmt.Sprintf(`"msg"="Pod termination requested" "podUID"="%s" "reason"="deleted"`, deleting.UID)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(h.logs.String(), started); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the agent never started terminating the deleted pod")
		}
	}
	fired := time.Now()
	select {
	case trig.ch <- true:
	case <-time.After(30 * time.Second):
		t.Fatal("the shutdown manager does not watch the trigger")
	}

	// The node turns NotReady at once, with the kubelet's message.
	waitNodeReadyCondition(t, c, h.node, corev1.ConditionFalse, "node is shutting down")
	// A new pod is refused.
	if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, h.apiPod(ns, "late", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	late := waitAPIPod(t, c, ns, "late", time.Minute, "refusal", func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodFailed
	})
	// The kubelet prefixes every admission refusal with "Pod was rejected: ".
	if late.Status.Reason != "NodeShutdown" || late.Status.Message != "Pod was rejected: Pod was rejected as the node is shutting down." {
		t.Errorf("late pod reason %q message %q", late.Status.Reason, late.Status.Message)
	}

	terminated := func(p *corev1.Pod, err error) bool {
		return err == nil && p.Status.Phase == corev1.PodFailed && len(p.Status.ContainerStatuses) == 1 &&
			p.Status.ContainerStatuses[0].State.Terminated != nil
	}
	r := waitAPIPod(t, c, ns, "regular", time.Minute, "shutdown termination", terminated)
	k := waitAPIPod(t, c, "default", mirror, time.Minute, "shutdown termination", terminated)
	for _, p := range []*corev1.Pod{r, k} {
		checkShutdownStatus(t, p)
	}
	rEnd := r.Status.ContainerStatuses[0].State.Terminated.FinishedAt.Time
	kEnd := k.Status.ContainerStatuses[0].State.Terminated.FinishedAt.Time
	// The DisruptionTarget condition's transition is when each kill began.
	rKill, kKill := disruptionTime(r), disruptionTime(k)
	start := fired.Truncate(time.Second) // API times have whole seconds
	t.Logf("trigger %s; regular killed +%v finished +%v; critical killed +%v finished +%v", fired.Format("15:04:05.000"),
		rKill.Sub(start), rEnd.Sub(start), kKill.Sub(start), kEnd.Sub(start))
	// The regular pod had min(60s, 12s-4s) = 8s, and the critical one was
	// killed only when that share ran out (the regular pod ignores
	// SIGTERM), with min(30s, 4s) = 4s. API times have whole seconds and
	// the runtime rounds a container's budget down to whole seconds: 2s
	// below (the regular group may end at 7.x s, when its pod stopped);
	// the upper bounds leave the loaded machine 5s more, well
	// below the pods' own 60s and 30s.
	if d := rEnd.Sub(start); d < 6*time.Second || d > 13*time.Second {
		t.Errorf("regular pod ended %v after the trigger, want its 8s share", d)
	}
	if d := kKill.Sub(rKill); d < 6*time.Second || d > 10*time.Second {
		t.Errorf("critical pod killed %v after the regular one, want after the regular 8s share", d)
	}
	if d := kEnd.Sub(kKill); d < 2*time.Second || d > 9*time.Second {
		t.Errorf("critical pod ended %v after its kill began, want its 4s share", d)
	}
	if kEnd.Before(rEnd) {
		t.Errorf("critical pod ended at %v, before the regular one at %v", kEnd, rEnd)
	}
	waitAPIPod(t, c, ns, "deleting", time.Minute, "removal", func(_ *corev1.Pod, err error) bool { return apierrors.IsNotFound(err) })
	if d := time.Since(fired); d > 25*time.Second {
		t.Errorf("the pod deleted with 60s was removed %v after the trigger, want within its 8s share (and the API's removal)", d)
	} else {
		t.Logf("the pod deleted with 60s was removed %v after the trigger", d.Round(time.Second))
	}
	if !strings.Contains(h.logs.String(), fmt.Sprintf(`"msg"="Pod grace period shortened" "podUID"="%s"`, deleting.UID)) {
		t.Error("the pod workers did not shorten the deleted pod's grace period")
	}
	select {
	case <-trig.released:
	case <-time.After(30 * time.Second):
		t.Error("the trigger was not released after the pods terminated")
	}
	// The kubelet's state file keeps the shutdown's start and end.
	b, err := os.ReadFile(filepath.Join(h.rootDir, shutdown.StateFile))
	var st struct{ StartTime, EndTime time.Time }
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	// The shutdown ends when the critical pod is gone or when its 4s share
	// runs out, as the kubelet's: on a loaded machine the container may
	// finish after that (API times have whole seconds, so 3s).
	if err != nil || st.StartTime.Before(start) || st.EndTime.Before(kKill) ||
		(st.EndTime.Before(kEnd) && st.EndTime.Sub(kKill) < 3*time.Second) {
		t.Errorf("state file %s (%v): want the start after the trigger and the end after the critical pod or its share", b, err)
	}
}

// checkShutdownStatus checks the kubelet's final status of a pod killed
// for a node shutdown.
func checkShutdownStatus(t *testing.T, p *corev1.Pod) {
	t.Helper()
	if p.Status.Reason != "Terminated" || p.Status.Message != "Pod was terminated in response to imminent node shutdown." {
		t.Errorf("pod %s reason %q message %q", p.Name, p.Status.Reason, p.Status.Message)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			if c.Status != corev1.ConditionTrue || c.Reason != "TerminationByKubelet" ||
				c.Message != "Pod was terminated in response to imminent node shutdown." {
				t.Errorf("pod %s DisruptionTarget %+v", p.Name, c)
			}
			return
		}
	}
	t.Errorf("pod %s has no DisruptionTarget condition: %+v", p.Name, p.Status.Conditions)
}

// disruptionTime is the transition time of the pod's DisruptionTarget
// condition (zero without one).
func disruptionTime(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// waitNodeReadyCondition polls the node until its Ready condition has status (and,
// when message is set, that message with the kubelet's reason).
func waitNodeReadyCondition(t *testing.T, c clusterEnv, node string, status corev1.ConditionStatus, message string) {
	t.Helper()
	var last corev1.NodeCondition
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		n, err := c.admin.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil {
			continue
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type != corev1.NodeReady {
				continue
			}
			last = cond
			if cond.Status == status && (message == "" || cond.Message == message && cond.Reason == "KubeletNotReady") {
				return
			}
		}
	}
	t.Fatalf("node %s Ready never became %s %q; last %+v", node, status, message, last)
}
