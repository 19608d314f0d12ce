package sim_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/internal/simharness"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/sources"
)

// scriptedPod is a static pod with one container "app" scripted by ann.
func scriptedPod(name string, policy corev1.RestartPolicy, ann map[string]string) *corev1.Pod {
	grace := int64(30)
	annotations := map[string]string{sources.AnnotationSource: sources.FileSource}
	for k, v := range ann {
		annotations[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-" + name), Annotations: annotations,
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 policy,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "app", Image: "busybox:1", ImagePullPolicy: corev1.PullIfNotPresent,
			}},
		},
	}
}

// newHarness starts the pipeline with container garbage collection out of
// the way, so that every container instance stays inspectable.
func newHarness(t *testing.T) *simharness.Harness {
	h := simharness.New(t, simharness.Options{Agent: agent.Config{ContainerGCPeriod: time.Hour}})
	h.Start()
	return h
}

// appStatus is the agent's status of the pod's container "app", or nil.
func appStatus(h *simharness.Harness, uid types.UID) *corev1.ContainerStatus {
	p := h.Pod(uid)
	if p == nil {
		return nil
	}
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == "app" {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// instances returns every instance of the pod's containers as the
// simulated runtime has it, in the order they were created.
func instances(t *testing.T, h *simharness.Harness, uid types.UID) []*runtimeapi.ContainerStatus {
	t.Helper()
	cs, err := h.Sim.ListContainers(t.Context(), &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{noderuntime.LabelPodUID: string(uid)}})
	if err != nil {
		t.Fatal(err)
	}
	var out []*runtimeapi.ContainerStatus
	for _, c := range cs {
		resp, err := h.Sim.ContainerStatus(t.Context(), c.Id, false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp.Status)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metadata.Attempt < out[j].Metadata.Attempt })
	return out
}

func TestPipelineCrashLoopBacksOffTenTwentyForty(t *testing.T) {
	h := newHarness(t)
	pod := scriptedPod("crashy", corev1.RestartPolicyAlways, map[string]string{
		"sim.nodekit.io/app.exit-after": "5s", "sim.nodekit.io/app.exit-code": "1",
	})
	h.Add(pod)
	h.StepUntil("the third exit", 2*time.Minute, func() bool {
		cs := appStatus(h, pod.UID)
		return cs != nil && cs.RestartCount == 2 && cs.State.Running == nil
	})
	// The agent records why a container could not start when a sync meets
	// the back-off, and shows it from the pod's next sync on. Nothing syncs
	// the pod again until the back-off ends (the agent requeues it for
	// then), so an unchanged UPDATE makes that next sync happen now.
	h.Update(pod)
	h.StepUntil("the status shows the back-off", 5*time.Second, func() bool {
		w := appStatus(h, pod.UID).State.Waiting
		return w != nil && w.Reason == "CrashLoopBackOff"
	})
	cs := appStatus(h, pod.UID)
	if !strings.Contains(cs.State.Waiting.Message, "back-off 20s") || cs.RestartCount != 2 {
		t.Fatalf("state in the second back-off = %+v (restarts %d), want back-off 20s after 2 restarts", cs.State, cs.RestartCount)
	}
	if term := cs.LastTerminationState.Terminated; term == nil || term.ExitCode != 1 || term.Reason != "Error" {
		t.Fatalf("last termination = %+v, want exit code 1 (Error)", cs.LastTerminationState)
	}
	if p := h.Pod(pod.UID); p.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s, want Running (restartPolicy Always)", p.Status.Phase)
	}
	h.StepUntil("the fourth restart runs", 3*time.Minute, func() bool {
		cs := appStatus(h, pod.UID)
		return cs != nil && cs.RestartCount == 4 && cs.State.Running != nil
	})

	runs := instances(t, h, pod.UID)
	if len(runs) != 5 {
		t.Fatalf("%d container instances, want 5", len(runs))
	}
	// The kubelet restarts at once after the first exit, then backs off
	// 10s, 20s, 40s. The pipeline notices an exit within a relist period
	// and starts within a sync period of the back-off's end.
	const slack = 2 * time.Second
	wantBackOff := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second}
	var got []string
	for i := 1; i < len(runs); i++ {
		prev, cur := runs[i-1], runs[i]
		if ran := time.Duration(prev.FinishedAt - prev.StartedAt); ran != 5*time.Second || prev.ExitCode != 1 {
			t.Errorf("instance %d ran %s and exited %d, want 5s and 1", i-1, ran, prev.ExitCode)
		}
		gap := time.Duration(cur.StartedAt - prev.FinishedAt)
		got = append(got, gap.String())
		if want := wantBackOff[i-1]; gap < want || gap > want+slack {
			t.Errorf("restart %d came %s after the exit, want %s to %s", i, gap, want, want+slack)
		}
	}
	t.Logf("restart delays: %v", got)
}

func TestPipelineRestartPolicyEndsThePod(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    corev1.RestartPolicy
		code      string
		wantPhase corev1.PodPhase
		wantCode  int32
	}{
		{"Never with exit code 3 ends Failed", corev1.RestartPolicyNever, "3", corev1.PodFailed, 3},
		{"OnFailure with exit code 0 ends Succeeded", corev1.RestartPolicyOnFailure, "0", corev1.PodSucceeded, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			pod := scriptedPod("job", tc.policy, map[string]string{
				"sim.nodekit.io/app.exit-after": "5s", "sim.nodekit.io/app.exit-code": tc.code,
			})
			h.Add(pod)
			took := h.StepUntil("the pod ends", time.Minute, func() bool {
				p := h.Pod(pod.UID)
				return p != nil && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded)
			})
			p := h.Pod(pod.UID)
			cs := appStatus(h, pod.UID)
			if p.Status.Phase != tc.wantPhase || cs == nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != tc.wantCode {
				t.Fatalf("phase %s, container %+v; want %s with exit code %d", p.Status.Phase, cs, tc.wantPhase, tc.wantCode)
			}
			if took < 5*time.Second || cs.RestartCount != 0 {
				t.Fatalf("ended after %s with %d restarts, want after 5s with none", took, cs.RestartCount)
			}
			h.Step(30 * time.Second)
			if n := len(instances(t, h, pod.UID)); n != 1 {
				t.Fatalf("%d container instances after the end, want 1 (no restart)", n)
			}
		})
	}
}

func TestPipelineSlowStartStaysPendingUntilTheClockPassesIt(t *testing.T) {
	h := newHarness(t)
	pod := scriptedPod("slow", corev1.RestartPolicyAlways, map[string]string{"sim.nodekit.io/app.start-delay": "30s"})
	h.Add(pod)
	h.Step(29 * time.Second)
	p := h.Pod(pod.UID)
	if p == nil || p.Status.Phase != corev1.PodPending {
		t.Fatalf("after 29s: %v, want Pending", describe(p))
	}
	took := h.StepUntil("the pod runs", 10*time.Second, func() bool {
		p := h.Pod(pod.UID)
		return p != nil && p.Status.Phase == corev1.PodRunning
	})
	if total := 29*time.Second + took; total < 30*time.Second || total > 33*time.Second {
		t.Fatalf("running after %s, want just after 30s", total)
	}
	cs := appStatus(h, pod.UID)
	if cs == nil || cs.State.Running == nil {
		t.Fatalf("container %+v, want running", cs)
	}
	if since := cs.State.Running.StartedAt.Sub(simharness.Epoch); since < 30*time.Second || since > 31*time.Second {
		t.Fatalf("container started %s after the pod was added, want 30s", since)
	}
}

func describe(p *corev1.Pod) string {
	if p == nil {
		return "no pod"
	}
	return fmt.Sprintf("phase %s, containers %+v", p.Status.Phase, p.Status.ContainerStatuses)
}
