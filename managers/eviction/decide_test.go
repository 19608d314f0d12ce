package eviction

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"
)

func mi(v int64) int64 { return v << 20 }

func qv(s string) Value { q := resource.MustParse(s); return Value{Quantity: &q} }

// step is one monitoring pass: time advanced before it, what is observed,
// and what the pass must decide.
type step struct {
	advance    time.Duration
	obs        Observations
	conditions []corev1.NodeConditionType
	act        []Signal
}

func TestMonitorDecisions(t *testing.T) {
	t.Parallel()
	memHard := Threshold{Signal: SignalMemoryAvailable, Value: qv("100Mi"), Hard: true}
	memOK := Observations{SignalMemoryAvailable: {Available: mi(500), Capacity: mi(1000)}}
	memLow := Observations{SignalMemoryAvailable: {Available: mi(50), Capacity: mi(1000)}}
	mem120 := Observations{SignalMemoryAvailable: {Available: mi(120), Capacity: mi(1000)}}
	for _, tc := range []struct {
		name   string
		policy Policy
		steps  []step
	}{
		{"no threshold met gives no pressure and no action", Policy{Thresholds: []Threshold{memHard}}, []step{
			{obs: memOK},
		}},
		{"a hard threshold acts at once and holds the condition for the transition period", Policy{Thresholds: []Threshold{memHard}, TransitionPeriod: time.Minute}, []step{
			{obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, act: []Signal{SignalMemoryAvailable}},
			{advance: 10 * time.Second, obs: memOK, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
			{advance: 49 * time.Second, obs: memOK, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
			{advance: time.Second, obs: memOK},
		}},
		{"the default transition period is 5m", Policy{Thresholds: []Threshold{memHard}}, []step{
			{obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, act: []Signal{SignalMemoryAvailable}},
			{advance: 4*time.Minute + 59*time.Second, obs: memOK, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
			{advance: time.Second, obs: memOK},
		}},
		{"a soft threshold acts only after its grace period held", Policy{Thresholds: []Threshold{
			{Signal: SignalMemoryAvailable, Value: qv("100Mi"), GracePeriod: 30 * time.Second}}}, []step{
			{obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
			{advance: 20 * time.Second, obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
			{advance: 10 * time.Second, obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, act: []Signal{SignalMemoryAvailable}},
		}},
		{"a soft threshold that stops holding restarts its grace period", Policy{Thresholds: []Threshold{
			{Signal: SignalMemoryAvailable, Value: qv("100Mi"), GracePeriod: 30 * time.Second}}, TransitionPeriod: time.Second}, []step{
			{obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
			{advance: 20 * time.Second, obs: memOK},
			{advance: 10 * time.Second, obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
			{advance: 29 * time.Second, obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
			{advance: time.Second, obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, act: []Signal{SignalMemoryAvailable}},
		}},
		{"minimum reclaim keeps a met threshold until the signal is past it by that much", Policy{Thresholds: []Threshold{
			{Signal: SignalMemoryAvailable, Value: qv("100Mi"), Hard: true, MinReclaim: &Value{Quantity: ptrQ("50Mi")}}}, TransitionPeriod: time.Second}, []step{
			{obs: mem120}, // above 100Mi, never met: min reclaim does not apply
			{obs: memLow, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, act: []Signal{SignalMemoryAvailable}},
			{advance: 10 * time.Second, obs: mem120, conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, act: []Signal{SignalMemoryAvailable}},
			{advance: 10 * time.Second, obs: memOK},
		}},
		{"percentages apply to the signal's capacity and disk signals drive DiskPressure", Policy{Thresholds: []Threshold{
			{Signal: SignalNodeFsAvailable, Value: Value{Percentage: 0.1}, Hard: true},
			{Signal: SignalImageFsInodesFree, Value: Value{Percentage: 0.05}, Hard: true}}}, []step{
			{obs: Observations{SignalNodeFsAvailable: {Available: 11, Capacity: 100}, SignalImageFsInodesFree: {Available: 6, Capacity: 100}}},
			{obs: Observations{SignalNodeFsAvailable: {Available: 9, Capacity: 100}, SignalImageFsInodesFree: {Available: 4, Capacity: 100}},
				conditions: []corev1.NodeConditionType{corev1.NodeDiskPressure}, act: []Signal{SignalImageFsInodesFree, SignalNodeFsAvailable}},
		}},
		{"pid.available drives PIDPressure and memory acts first", Policy{Thresholds: []Threshold{
			{Signal: SignalPIDAvailable, Value: Value{Percentage: 0.1}, Hard: true}, memHard}}, []step{
			{obs: Observations{SignalPIDAvailable: {Available: 5, Capacity: 100}, SignalMemoryAvailable: {Available: mi(1), Capacity: mi(1000)}},
				conditions: []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodePIDPressure}, act: []Signal{SignalMemoryAvailable, SignalPIDAvailable}},
		}},
		{"a signal without stats is not met", Policy{Thresholds: []Threshold{memHard}}, []step{
			{obs: Observations{}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			m := NewMonitor(tc.policy)
			for i, s := range tc.steps {
				clk.Step(s.advance)
				d := m.Observe(clk.Now(), s.obs)
				var conds []corev1.NodeConditionType
				for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
					if d.Conditions[c] {
						conds = append(conds, c)
					}
				}
				var act []Signal
				for _, th := range d.Act {
					act = append(act, th.Signal)
				}
				if !reflect.DeepEqual(conds, s.conditions) || !reflect.DeepEqual(act, s.act) {
					t.Fatalf("step %d: conditions %v act %v; want %v and %v", i, conds, act, s.conditions, s.act)
				}
			}
		})
	}
}

func ptrQ(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
