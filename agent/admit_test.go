package agent

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/go-logr/logr/testr"

	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/sources"
)

// fakeNode is a NodeResources with fixed allocatable resources.
type fakeNode struct {
	alloc corev1.ResourceList
	err   error
}

func (f fakeNode) Allocatable() (corev1.ResourceList, error) { return f.alloc, f.err }

// pressuredNode refuses pods without requests, as MemoryPressure refuses
// BestEffort pods.
type pressuredNode struct{ fakeNode }

func (pressuredNode) AdmitUnderPressure(pod *corev1.Pod) (string, string, bool) {
	if len(pod.Spec.Containers[0].Resources.Requests) == 0 {
		return "Evicted", "The node had condition: [MemoryPressure]. ", false
	}
	return "", "", true
}

// requesting is a static pod whose one container requests kv.
func requesting(uid string, kv ...string) *corev1.Pod {
	pod := staticPod(uid, uid)
	reqs := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		reqs[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	pod.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: reqs}}}
	return pod
}

func TestAdmissionRejectsPodsThatDoNotFitTheNode(t *testing.T) {
	node := fakeNode{alloc: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("1Gi"),
	}}
	cases := []struct {
		name     string
		node     NodeResources
		pods     []*corev1.Pod
		admitted []string
		rejected string
		reason   string
		wantMsg  string
	}{
		{"a pod asking more cpu than is left is OutOfcpu",
			node, []*corev1.Pod{requesting("a", "cpu", "1500m"), requesting("b", "cpu", "1")}, []string{"a"}, "b", "OutOfcpu",
			"Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000"},
		{"a pod asking more memory than the node has is OutOfmemory",
			node, []*corev1.Pod{requesting("a", "memory", "2Gi")}, nil, "a", "OutOfmemory",
			"Pod was rejected: Node didn't have enough resource: memory, requested: 2147483648, used: 0, capacity: 1073741824"},
		{"pods that fit together are all admitted, and a pod without requests always fits",
			node, []*corev1.Pod{requesting("a", "cpu", "1", "memory", "512Mi"), requesting("b", "cpu", "1", "memory", "512Mi"), requesting("c")}, []string{"a", "b", "c"}, "", "", ""},
		{"a resource the node does not report is not checked",
			node, []*corev1.Pod{requesting("a", "ephemeral-storage", "100Ti")}, []string{"a"}, "", "", ""},
		{"without node resources only MaxPods counts",
			nil, []*corev1.Pod{requesting("a", "cpu", "64")}, []string{"a"}, "", "", ""},
		{"a pod asking an extended resource the node does not have is OutOf it, with capacity 0",
			node, []*corev1.Pod{requesting("a", "nvidia.com/gpu", "1")}, nil, "a", "OutOfnvidia.com/gpu",
			"Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0"},
		{"an extended resource is refused even without node resources",
			nil, []*corev1.Pod{requesting("a", "example.com/foo", "2")}, nil, "a", "OutOfexample.com/foo",
			"Pod was rejected: Node didn't have enough resource: example.com/foo, requested: 2, used: 0, capacity: 0"},
		{"an extended resource the node has fits until the other pods use it up",
			fakeNode{alloc: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}},
			[]*corev1.Pod{requesting("a", "nvidia.com/gpu", "1"), requesting("b", "nvidia.com/gpu", "1"), requesting("c", "nvidia.com/gpu", "1")},
			[]string{"a", "b"}, "c", "OutOfnvidia.com/gpu",
			"Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 2, capacity: 2"},
		{"a hugepages request on a node with none is OutOf it, with capacity 0",
			node, []*corev1.Pod{requesting("a", "hugepages-2Mi", "2Mi", "memory", "2Mi")}, nil, "a", "OutOfhugepages-2Mi",
			"Pod was rejected: Node didn't have enough resource: hugepages-2Mi, requested: 2097152, used: 0, capacity: 0"},
		{"a node reporting 0 of a page size refuses a request of it",
			fakeNode{alloc: corev1.ResourceList{"hugepages-1Gi": resource.MustParse("0")}}, []*corev1.Pod{requesting("a", "hugepages-1Gi", "1Gi")}, nil, "a", "OutOfhugepages-1Gi",
			"Pod was rejected: Node didn't have enough resource: hugepages-1Gi, requested: 1073741824, used: 0, capacity: 0"},
		{"huge pages the node has fit until the other pods use them up",
			fakeNode{alloc: corev1.ResourceList{"hugepages-2Mi": resource.MustParse("4Mi")}},
			[]*corev1.Pod{requesting("a", "hugepages-2Mi", "4Mi"), requesting("b", "hugepages-2Mi", "2Mi")}, []string{"a"}, "b", "OutOfhugepages-2Mi",
			"Pod was rejected: Node didn't have enough resource: hugepages-2Mi, requested: 2097152, used: 4194304, capacity: 4194304"},
		{"a kubernetes.io/ resource the node does not list is OutOf it",
			node, []*corev1.Pod{requesting("a", "kubernetes.io/widget", "1")}, nil, "a", "OutOfkubernetes.io/widget",
			"Pod was rejected: Node didn't have enough resource: kubernetes.io/widget, requested: 1, used: 0, capacity: 0"},
		{"an attachable-volumes resource the node does not list is OutOf it",
			node, []*corev1.Pod{requesting("a", "attachable-volumes-csi-x", "1")}, nil, "a", "OutOfattachable-volumes-csi-x",
			"Pod was rejected: Node didn't have enough resource: attachable-volumes-csi-x, requested: 1, used: 0, capacity: 0"},
		{"under pressure the PressureAdmitter refuses first",
			pressuredNode{node}, []*corev1.Pod{requesting("a", "cpu", "1"), requesting("b")}, []string{"a"}, "b", "Evicted",
			"Pod was rejected: The node had condition: [MemoryPressure]. "},
		{"an unreadable machine admits the pod",
			fakeNode{err: errors.New("no /proc")}, []*corev1.Pod{requesting("a", "cpu", "64")}, []string{"a"}, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lt := newLoopTest(t, Config{})
			lt.agent.admit = DefaultAdmission(c.node, Config{}, testr.New(t))
			lt.start()
			lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: c.pods}
			for _, want := range c.admitted {
				if call := lt.nextCall(); call.UpdateType != podworkers.SyncPodCreate || string(call.Pod.UID) != want {
					t.Fatalf("call = %s %v, want create of %s", call.UpdateType, call.Pod.UID, want)
				}
			}
			lt.noCall()
			if c.rejected == "" {
				return
			}
			st, ok := lt.agent.statuses.GetPodStatus(types.UID(c.rejected))
			if !ok || st.Phase != corev1.PodFailed || st.Reason != c.reason || st.Message != c.wantMsg {
				t.Fatalf("rejected pod status = %+v, want %s: %s", st, c.reason, c.wantMsg)
			}
		})
	}
}
