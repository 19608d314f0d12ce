package nodestatus

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodekit/nodekit/managers/eviction"
)

func TestAllocatable(t *testing.T) {
	t.Parallel()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	hard, err := eviction.HardThresholds("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		reserved corev1.ResourceList
		hard     eviction.Thresholds
		want     map[corev1.ResourceName]string
	}{
		{"nothing reserved and no thresholds is the capacity", nil, nil,
			map[corev1.ResourceName]string{"cpu": "4", "memory": "8Gi", "ephemeral-storage": "100Gi", "pods": "110"}},
		{"the default hard thresholds take 100Mi of memory and 10% of ephemeral-storage", nil, hard,
			map[corev1.ResourceName]string{"cpu": "4", "memory": "8092Mi", "ephemeral-storage": "90Gi", "pods": "110"}},
		{"reserved and thresholds add up", corev1.ResourceList{
			"cpu": resource.MustParse("500m"), "memory": resource.MustParse("1Gi"), "ephemeral-storage": resource.MustParse("5Gi"), "pid": resource.MustParse("100"),
		}, hard, map[corev1.ResourceName]string{"cpu": "3500m", "memory": "7068Mi", "ephemeral-storage": "85Gi", "pods": "110"}},
		{"more reserved than capacity gives zero", corev1.ResourceList{"cpu": resource.MustParse("5")}, nil,
			map[corev1.ResourceName]string{"cpu": "0", "memory": "8Gi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Allocatable(capacity, tc.reserved, tc.hard)
			for name, w := range tc.want {
				if q := got[name]; q.Cmp(resource.MustParse(w)) != 0 {
					t.Errorf("%s = %s, want %s", name, q.String(), w)
				}
			}
			if _, ok := got["pid"]; ok {
				t.Error("pid is not a node resource")
			}
		})
	}
	if capacity.Cpu().String() != "4" {
		t.Error("Allocatable changed its input")
	}
}

func TestParseReserved(t *testing.T) {
	t.Parallel()
	got, err := ParseReserved(map[string]string{"cpu": "100m", "memory": "256Mi", "ephemeral-storage": "1Gi", "pid": "1000"})
	if err != nil || len(got) != 4 || got.Cpu().MilliValue() != 100 {
		t.Fatalf("ParseReserved = %v, %v", got, err)
	}
	for in, want := range map[string]string{"nvidia.com/gpu": "only cpu, memory", "memory": "must not be negative", "cpu": "quantities must match"} {
		v := map[string]string{"nvidia.com/gpu": "1", "memory": "-1Mi", "cpu": "lots"}[in]
		if _, err := ParseReserved(map[string]string{in: v}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseReserved(%s=%s) = %v, want %q", in, v, err, want)
		}
	}
}

func TestSetCapacityReportsAllocatableLessReservedAndThresholds(t *testing.T) {
	t.Parallel()
	cfg := Config{NodeName: "n", Reserved: corev1.ResourceList{"memory": resource.MustParse("1Gi")}}
	cfg.EvictionHard, _ = eviction.ParseThresholds("memory.available<1Gi,nodefs.available<50Gi")
	node := &corev1.Node{}
	setCapacity(node, cfg.withDefaults(), testMachine())
	if q := node.Status.Capacity[corev1.ResourceMemory]; q.Cmp(resource.MustParse("8Gi")) != 0 {
		t.Errorf("memory capacity %s, want 8Gi", q.String())
	}
	if q := node.Status.Allocatable[corev1.ResourceMemory]; q.Cmp(resource.MustParse("6Gi")) != 0 {
		t.Errorf("memory allocatable %s, want 6Gi", q.String())
	}
	if q := node.Status.Allocatable[corev1.ResourceEphemeralStorage]; q.Cmp(resource.MustParse("50Gi")) != 0 {
		t.Errorf("ephemeral-storage allocatable %s, want 50Gi", q.String())
	}
}

type fixedPressure map[corev1.NodeConditionType]bool

func (f fixedPressure) Conditions() map[corev1.NodeConditionType]bool { return f }

func TestPressureSourceDecidesThePressureConditions(t *testing.T) {
	t.Parallel()
	r := &Reporter{}
	if r.pressureConditionsNow() != nil {
		t.Fatal("conditions without a source")
	}
	r.SetPressureSource(fixedPressure{corev1.NodeMemoryPressure: true})
	node := &corev1.Node{}
	// The usage is healthy: only the source can make MemoryPressure True.
	setNodeStatus(node, Config{NodeName: "n"}.withDefaults(), inputs{machine: testMachine(), usage: healthyUsage(), pressure: r.pressureConditionsNow()})
	want := map[corev1.NodeConditionType]corev1.ConditionStatus{
		corev1.NodeMemoryPressure: corev1.ConditionTrue, corev1.NodeDiskPressure: corev1.ConditionFalse, corev1.NodePIDPressure: corev1.ConditionFalse,
	}
	for _, c := range node.Status.Conditions {
		if w, ok := want[c.Type]; ok && c.Status != w {
			t.Errorf("%s = %s, want %s", c.Type, c.Status, w)
		}
	}
	r.SetPressureSource(nil)
	if r.pressureConditionsNow() != nil {
		t.Fatal("conditions after the source was removed")
	}
}
