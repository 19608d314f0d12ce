package status

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func cond(t corev1.PodConditionType, s corev1.ConditionStatus, at time.Time) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.NewTime(at)}
}

func TestPrepare(t *testing.T) {
	earlier := epoch.Add(-time.Hour)
	now := epoch.Add(500 * time.Millisecond)
	tests := []struct {
		name  string
		old   corev1.PodStatus
		next  corev1.PodStatus
		check func(t *testing.T, got *corev1.PodStatus)
	}{
		{
			name: "a condition whose status holds keeps its transition time",
			old:  corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, earlier)}},
			next: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, now)}},
			check: func(t *testing.T, got *corev1.PodStatus) {
				if lt := got.Conditions[0].LastTransitionTime.Time; !lt.Equal(earlier) {
					t.Errorf("LastTransitionTime = %v, want %v", lt, earlier)
				}
			},
		},
		{
			name: "a condition that flips without a time gets now, cut to the second",
			old:  corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse, earlier)}},
			next: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
			check: func(t *testing.T, got *corev1.PodStatus) {
				if lt := got.Conditions[0].LastTransitionTime.Time; !lt.Equal(epoch) {
					t.Errorf("LastTransitionTime = %v, want %v", lt, epoch)
				}
			},
		},
		{
			name: "a condition that flips keeps the time the caller gave",
			old:  corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse, earlier)}},
			next: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, epoch.Add(-time.Minute))}},
			check: func(t *testing.T, got *corev1.PodStatus) {
				if lt := got.Conditions[0].LastTransitionTime.Time; !lt.Equal(epoch.Add(-time.Minute)) {
					t.Errorf("LastTransitionTime = %v, want the caller's", lt)
				}
			},
		},
		{
			name: "a terminal phase is never left",
			old:  corev1.PodStatus{Phase: corev1.PodSucceeded, Reason: "Done", Message: "all exited 0"},
			next: corev1.PodStatus{Phase: corev1.PodRunning},
			check: func(t *testing.T, got *corev1.PodStatus) {
				if got.Phase != corev1.PodSucceeded || got.Reason != "Done" || got.Message != "all exited 0" {
					t.Errorf("phase, reason, message = %s, %q, %q; want Succeeded, Done, all exited 0", got.Phase, got.Reason, got.Message)
				}
			},
		},
		{
			name: "a failed pod stays failed",
			old:  corev1.PodStatus{Phase: corev1.PodFailed},
			next: corev1.PodStatus{Phase: corev1.PodPending},
			check: func(t *testing.T, got *corev1.PodStatus) {
				if got.Phase != corev1.PodFailed {
					t.Errorf("phase = %s, want Failed", got.Phase)
				}
			},
		},
		{
			name: "a running pod may become terminal",
			old:  corev1.PodStatus{Phase: corev1.PodRunning},
			next: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"},
			check: func(t *testing.T, got *corev1.PodStatus) {
				if got.Phase != corev1.PodFailed || got.Reason != "Evicted" {
					t.Errorf("phase, reason = %s, %q; want Failed, Evicted", got.Phase, got.Reason)
				}
			},
		},
		{
			name: "the start time is kept",
			old:  corev1.PodStatus{StartTime: &metav1.Time{Time: earlier}},
			next: corev1.PodStatus{StartTime: &metav1.Time{Time: now}},
			check: func(t *testing.T, got *corev1.PodStatus) {
				if !got.StartTime.Time.Equal(earlier) {
					t.Errorf("StartTime = %v, want %v", got.StartTime, earlier)
				}
			},
		},
		{
			name: "a missing start time is set to now",
			check: func(t *testing.T, got *corev1.PodStatus) {
				if got.StartTime == nil || !got.StartTime.Time.Equal(epoch) {
					t.Errorf("StartTime = %v, want %v", got.StartTime, epoch)
				}
			},
		},
		{
			name: "container times are cut to the second and containers sorted by name",
			next: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
				{Name: "b", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}},
				{Name: "a"},
			}},
			check: func(t *testing.T, got *corev1.PodStatus) {
				if got.ContainerStatuses[0].Name != "a" || got.ContainerStatuses[1].Name != "b" {
					t.Errorf("containers = %s, %s; want a, b", got.ContainerStatuses[0].Name, got.ContainerStatuses[1].Name)
				}
				if at := got.ContainerStatuses[1].State.Running.StartedAt.Time; !at.Equal(epoch) {
					t.Errorf("StartedAt = %v, want %v", at, epoch)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := tt.next.DeepCopy()
			prepare(&tt.old, next, &corev1.PodSpec{}, now)
			tt.check(t, next)
		})
	}
}

func TestMergeForAPI(t *testing.T) {
	at := epoch
	gate := corev1.PodConditionType("example.com/gate")
	tests := []struct {
		name string
		api  corev1.PodStatus
		ours corev1.PodStatus
		want []corev1.PodCondition
	}{
		{
			name: "the agent's conditions replace the API's in the API's order",
			api:  corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodScheduled, "True", at), cond(corev1.PodReady, "False", at)}},
			ours: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.ContainersReady, "True", at), cond(corev1.PodReady, "True", at)}},
			want: []corev1.PodCondition{cond(corev1.PodScheduled, "True", at), cond(corev1.PodReady, "True", at), cond(corev1.ContainersReady, "True", at)},
		},
		{
			name: "an agent condition the agent no longer reports is dropped",
			api:  corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodInitialized, "True", at)}},
			ours: corev1.PodStatus{},
			want: nil,
		},
		{
			name: "other components' conditions are kept over the agent's",
			api:  corev1.PodStatus{Conditions: []corev1.PodCondition{cond(gate, "True", at), cond(corev1.PodScheduled, "True", at)}},
			ours: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodScheduled, "False", at)}},
			want: []corev1.PodCondition{cond(gate, "True", at), cond(corev1.PodScheduled, "True", at)},
		},
		{
			name: "the agent's version of another component's condition fills a gap",
			api:  corev1.PodStatus{},
			ours: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodScheduled, "True", at)}},
			want: []corev1.PodCondition{cond(corev1.PodScheduled, "True", at)},
		},
		{
			name: "DisruptionTarget set elsewhere is kept when the agent has none",
			api:  corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.DisruptionTarget, "True", at)}},
			ours: corev1.PodStatus{},
			want: []corev1.PodCondition{cond(corev1.DisruptionTarget, "True", at)},
		},
		{
			name: "the agent's DisruptionTarget replaces the API's",
			api:  corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.DisruptionTarget, "False", at)}},
			ours: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.DisruptionTarget, "True", at)}},
			want: []corev1.PodCondition{cond(corev1.DisruptionTarget, "True", at)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, ours := tt.api.DeepCopy(), tt.ours.DeepCopy()
			got := mergeForAPI(api, ours)
			if !apiequality.Semantic.DeepEqual(got.Conditions, tt.want) {
				t.Errorf("conditions = %+v, want %+v", got.Conditions, tt.want)
			}
			if !apiequality.Semantic.DeepEqual(api, &tt.api) || !apiequality.Semantic.DeepEqual(ours, &tt.ours) {
				t.Error("mergeForAPI modified its arguments")
			}
		})
	}
}

func TestMergeForAPIKeepsOtherComponentsFields(t *testing.T) {
	api := &corev1.PodStatus{
		NominatedNodeName:     "node2",
		ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "gpu"}},
	}
	got := mergeForAPI(api, running())
	if got.NominatedNodeName != "node2" || len(got.ResourceClaimStatuses) != 1 {
		t.Fatalf("nominatedNodeName, claims = %q, %v; want the API's", got.NominatedNodeName, got.ResourceClaimStatuses)
	}
	if got.Phase != corev1.PodRunning || len(got.ContainerStatuses) != 1 {
		t.Fatalf("phase, containers = %s, %d; want the agent's", got.Phase, len(got.ContainerStatuses))
	}
}

func TestStatusPatch(t *testing.T) {
	old := apiPod("p", "uid-1").Status
	next := mergeForAPI(&old, running())
	patch, err := statusPatch("uid-1", &old, next)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(patch, &doc); err != nil {
		t.Fatalf("patch %s is not JSON: %v", patch, err)
	}
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"metadata", "status"}) {
		t.Fatalf("patch %s has keys %v, want metadata (the UID precondition) and status", patch, keys)
	}
	if !reflect.DeepEqual(doc["metadata"], map[string]any{"uid": "uid-1"}) {
		t.Fatalf("patch metadata = %v, want only uid", doc["metadata"])
	}
	status := doc["status"].(map[string]any)
	if _, ok := status["$setElementOrder/conditions"]; !ok {
		t.Fatalf("patch %s does not merge conditions by type", patch)
	}

	// Applied to the old pod, the patch gives the new status.
	oldJSON, _ := json.Marshal(corev1.Pod{Status: old})
	merged, err := strategicpatch.StrategicMergePatch(oldJSON, patch, corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(merged, &got); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(&got.Status, next) {
		t.Fatalf("patched status = %+v, want %+v", got.Status, next)
	}
}

func TestStatusPatchOfEqualStatusesCarriesOnlyTheUID(t *testing.T) {
	s := running()
	patch, err := statusPatch("uid-1", s, s)
	if err != nil {
		t.Fatal(err)
	}
	if string(patch) != `{"metadata":{"uid":"uid-1"}}` {
		t.Fatalf("patch = %s, want only the UID", patch)
	}
}
