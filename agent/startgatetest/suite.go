package startgatetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/agent"
)

// Suite runs Check on the gate newGate returns (a fresh one per batch) and
// fails t with every violation.
func Suite(t *testing.T, newGate func() agent.StartGate) {
	t.Helper()
	for _, err := range Check(newGate) {
		t.Error(err)
	}
}

// Batch returns n pods with assorted priorities, creation times and names.
func Batch(n int) []*corev1.Pod {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]*corev1.Pod, n)
	for i := range out {
		prio := int32((i * 7) % 3 * 100)
		out[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%02d", (i*5)%n), Namespace: "default",
				UID: types.UID(fmt.Sprintf("uid-%02d", i)), CreationTimestamp: metav1.Time{Time: epoch.Add(time.Duration((i*3)%n) * time.Second)}},
			Spec: corev1.PodSpec{Priority: &prio, Containers: []corev1.Container{{Name: "c"}}},
		}
	}
	return out
}

// Check returns every violation of the contract by the gates of newGate.
func Check(newGate func() agent.StartGate) (errs []error) {
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, n := range []int{1, 2, 7, 20} {
		gate := newGate()
		pods := Batch(n)
		want := copies(pods)
		ordered := append([]*corev1.Pod(nil), pods...)
		gate.Order(ordered)
		if !samePods(ordered, want) {
			fail("batch of %d: Order is not a permutation of the batch: %v", n, uids(ordered))
		}
		if !reflect.DeepEqual(byUID(pods), byUID(want)) {
			fail("batch of %d: Order mutated a pod", n)
		}
		if err := drive(gate, ordered); err != nil {
			fail("batch of %d: %v", n, err)
		}
		if !reflect.DeepEqual(byUID(pods), byUID(want)) {
			fail("batch of %d: Ready mutated a pod", n)
		}
	}
	return errs
}

// drive plays the agent: it asks the gate, starts what it lets go, marks
// those running before asking again, until every pod started.
func drive(gate agent.StartGate, waiting []*corev1.Pod) error {
	started := map[types.UID]bool{}
	var starting []*corev1.Pod
	limit := 10*len(waiting) + 10 // of the whole batch: a gate may take rounds per pod
	for round := 0; len(waiting) > 0; round++ {
		if round > limit {
			return fmt.Errorf("%d pods still wait after %d rounds", len(waiting), round)
		}
		offered := append([]*corev1.Pod(nil), waiting...)
		ready := gate.Ready(offered, agent.StartState{Starting: starting, Active: len(started) + len(waiting)})
		if len(ready) == 0 && len(starting) == 0 {
			return fmt.Errorf("Ready let no pod go with %d waiting and none starting", len(waiting))
		}
		seen := map[types.UID]bool{}
		for _, p := range ready {
			if seen[p.UID] {
				return fmt.Errorf("Ready returned %s twice", p.UID)
			}
			seen[p.UID] = true
			if !contains(waiting, p.UID) {
				return fmt.Errorf("Ready returned %s, which does not wait", p.UID)
			}
		}
		starting = nil // the previous round's pods are running now
		var still []*corev1.Pod
		for _, p := range waiting {
			if seen[p.UID] {
				started[p.UID] = true
				starting = append(starting, p)
			} else {
				still = append(still, p)
			}
		}
		waiting = still
	}
	return nil
}

func copies(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

func byUID(pods []*corev1.Pod) map[types.UID]*corev1.Pod {
	m := map[types.UID]*corev1.Pod{}
	for _, p := range pods {
		m[p.UID] = p
	}
	return m
}

func samePods(a, b []*corev1.Pod) bool {
	if len(a) != len(b) {
		return false
	}
	ma, mb := byUID(a), byUID(b)
	if len(ma) != len(a) {
		return false
	}
	for uid := range mb {
		if ma[uid] == nil {
			return false
		}
	}
	return true
}

func contains(pods []*corev1.Pod, uid types.UID) bool {
	for _, p := range pods {
		if p.UID == uid {
			return true
		}
	}
	return false
}

func uids(pods []*corev1.Pod) []types.UID {
	out := make([]types.UID, len(pods))
	for i, p := range pods {
		out[i] = p.UID
	}
	return out
}
