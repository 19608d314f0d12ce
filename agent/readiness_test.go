package agent

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/sources"
)

// gatedPod is a running pod with readiness gates g1 and g2 whose API status
// holds conds.
func gatedPod(conds ...corev1.PodCondition) *corev1.Pod {
	pod := testPod(corev1.RestartPolicyAlways, "a")
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "g1"}, {ConditionType: "g2"}}
	pod.Status.Conditions = conds
	return pod
}

func TestReadinessGatesDecideReady(t *testing.T) {
	t.Parallel()
	cond := func(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: s}
	}
	cases := []struct {
		name        string
		pod         *corev1.Pod
		running     bool
		wantStatus  corev1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{"every gate True and containers ready is Ready", gatedPod(cond("g1", "True"), cond("g2", "True")), true,
			corev1.ConditionTrue, "", ""},
		{"a missing gate condition holds Ready back", gatedPod(cond("g1", "True")), true,
			corev1.ConditionFalse, "ReadinessGatesNotReady", `corresponding condition of pod readiness gate "g2" does not exist.`},
		{"each gate that is not True is named", gatedPod(cond("g1", "False"), cond("g2", "Unknown")), true,
			corev1.ConditionFalse, "ReadinessGatesNotReady",
			`the status of pod readiness gate "g1" is not "True", but False, the status of pod readiness gate "g2" is not "True", but Unknown`},
		{"unready containers win over the gates", gatedPod(cond("g1", "False")), false,
			corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := &noderuntime.PodStatus{ID: c.pod.UID, SandboxStatuses: readySandbox()}
			if c.running {
				rs.ContainerStatuses = []*noderuntime.ContainerStatus{running("a", 0)}
			}
			s := generateAPIPodStatus(statusInput{pod: c.pod, runtime: rs, now: t0})
			ready := findCondition(s.Conditions, corev1.PodReady)
			if ready.Status != c.wantStatus || ready.Reason != c.wantReason || ready.Message != c.wantMessage {
				t.Fatalf("Ready = %s %q %q, want %s %q %q", ready.Status, ready.Reason, ready.Message, c.wantStatus, c.wantReason, c.wantMessage)
			}
			cr := findCondition(s.Conditions, corev1.ContainersReady)
			if want := corev1.ConditionStatus(map[bool]string{true: "True", false: "False"}[c.running]); cr.Status != want {
				t.Fatalf("ContainersReady = %s, want %s: the gates must not touch it", cr.Status, want)
			}
			for _, g := range c.pod.Status.Conditions {
				if got := findCondition(s.Conditions, g.Type); got == nil || got.Status != g.Status {
					t.Fatalf("gate condition %s = %+v, want it kept as %s", g.Type, got, g.Status)
				}
			}
		})
	}
}

func TestAGateConditionChangeInTheAPISyncsThePod(t *testing.T) {
	lt := newLoopTest(t, Config{})
	lt.start()
	pod := gatedPod(
		corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonReadinessGatesNotReady},
		corev1.PodCondition{Type: "g1", Status: corev1.ConditionTrue},
	)
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{pod}}
	if call := lt.nextCall(); call.UpdateType != podworkers.SyncPodCreate {
		t.Fatalf("call = %s, want create", call.UpdateType)
	}
	// g2 is still missing: Ready False is right, nothing to do.
	lt.config.updates <- sources.PodUpdate{Op: sources.RECONCILE, Pods: []*corev1.Pod{pod.DeepCopy()}}
	lt.noCall()
	// Someone sets g2 True: Ready must become True, so the pod is synced.
	changed := pod.DeepCopy()
	changed.Status.Conditions = append(changed.Status.Conditions, corev1.PodCondition{Type: "g2", Status: corev1.ConditionTrue})
	lt.config.updates <- sources.PodUpdate{Op: sources.RECONCILE, Pods: []*corev1.Pod{changed}}
	if call := lt.nextCall(); call.UpdateType != podworkers.SyncPodSync || len(call.Pod.Status.Conditions) != 4 {
		t.Fatalf("call = %s with %d conditions, want a sync of the changed pod", call.UpdateType, len(call.Pod.Status.Conditions))
	}
}
