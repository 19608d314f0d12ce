package eviction_test

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodekit/nodekit/managers/eviction"
)

// youngestFirst is a Ranker that evicts the most recently created pod
// first, whatever the signal.
type youngestFirst struct{}

func (youngestFirst) Rank(_ eviction.Signal, pods []*corev1.Pod, _ map[types.UID]statsapi.PodStats) []*corev1.Pod {
	out := append([]*corev1.Pod(nil), pods...)
	sort.SliceStable(out, func(i, j int) bool { return out[j].CreationTimestamp.Before(&out[i].CreationTimestamp) })
	return out
}

// ExampleRanker replaces the kubelet's eviction order; give it to
// NewDefault, or under fx supply it as eviction.Ranker.
func ExampleRanker() {
	var r eviction.Ranker = youngestFirst{}
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "old", CreationTimestamp: metav1.Unix(100, 0)}}
	young := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "young", CreationTimestamp: metav1.Unix(200, 0)}}
	fmt.Println(r.Rank(eviction.SignalMemoryAvailable, []*corev1.Pod{old, young}, nil)[0].Name)
	// Output: young
}

// ExampleAdmit shows admission under MemoryPressure.
func ExampleAdmit() {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	reason, message, ok := eviction.Admit(pod, map[corev1.NodeConditionType]bool{corev1.NodeMemoryPressure: true})
	fmt.Printf("%v %s %q\n", ok, reason, message)
	// Output: false Evicted "The node had condition: [MemoryPressure]. "
}
