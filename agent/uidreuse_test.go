package agent_test

import (
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/internal/simharness"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/sim"
	"github.com/nodekit/nodekit/sources"
)

// A static manifest removed and put back with the same UID while its pod
// still stops (its preStop hook runs) must run again once the old pod has
// stopped: the workers ignore the create as a restart request ("Pod restart
// requested while terminating"), forget the worker when it finished, and
// housekeeping sends the create again, as the kubelet's HandlePodCleanups.
func TestStaticPodPutBackWhileStoppingStartsAgain(t *testing.T) {
	h := simharness.New(t, simharness.Options{
		Agent: agent.Config{ContainerGCPeriod: time.Hour},
		// The preStop hook takes 10s.
		Sim: sim.Config{Latency: map[string]sim.Latency{"ExecSync": {Fixed: 10 * time.Second}}},
	})
	h.Start()
	pod := preStopPod()
	h.Add(pod)
	h.StepUntil("the pod runs", 10*time.Second, func() bool { return running(h, pod.UID) })

	h.Remove(pod)
	h.Step(2 * time.Second) // the preStop hook runs
	if cs := containers(t, h, pod.UID); len(cs) != 1 || cs[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("while the preStop hook runs: containers %v, want the one still running", cs)
	}
	h.Add(pod)
	h.StepUntil("the pod runs again in a new container", time.Minute, func() bool {
		cs := containers(t, h, pod.UID)
		return len(cs) == 2 && cs[1].State == runtimeapi.ContainerState_CONTAINER_RUNNING && running(h, pod.UID)
	})
	if cs := containers(t, h, pod.UID); cs[0].State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("the first container is %s, want exited", cs[0].State)
	}
}

func preStopPod() *corev1.Pod {
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "static-web",
			Annotations: map[string]string{sources.AnnotationSource: sources.FileSource},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "app", Image: "busybox:1", ImagePullPolicy: corev1.PullIfNotPresent,
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
					Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 10"}},
				}},
			}},
		},
	}
}

// running reports whether the agent shows the pod Running with its
// container running.
func running(h *simharness.Harness, uid types.UID) bool {
	p := h.Pod(uid)
	if p == nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == "app" && c.State.Running != nil {
			return true
		}
	}
	return false
}

// containers returns the pod's containers in the simulated runtime, oldest
// first.
func containers(t *testing.T, h *simharness.Harness, uid types.UID) []*runtimeapi.Container {
	t.Helper()
	cs, err := h.Sim.ListContainers(t.Context(), &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{noderuntime.LabelPodUID: string(uid)}})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].CreatedAt < cs[j].CreatedAt })
	return cs
}
