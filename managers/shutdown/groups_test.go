package shutdown

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestGroupPods(t *testing.T) {
	t.Parallel()
	two := []Group{{Priority: 0, GracePeriodSeconds: 20}, {Priority: SystemCriticalPriority, GracePeriodSeconds: 10}}
	three := []Group{{Priority: 10, GracePeriodSeconds: 1}, {Priority: 100, GracePeriodSeconds: 2}, {Priority: 1000, GracePeriodSeconds: 3}}
	cases := []struct {
		name   string
		groups []Group
		pods   []*corev1.Pod
		want   [][]string
	}{
		{"a pod without priority is regular", two, []*corev1.Pod{pod("a", nil, nil)}, [][]string{{"a"}, nil}},
		{"system-node-critical and system-cluster-critical priorities are critical", two,
			[]*corev1.Pod{pod("node", i32(2000001000), nil), pod("cluster", i32(2000000000), nil), pod("high", i32(1999999999), nil)},
			[][]string{{"high"}, {"node", "cluster"}}},
		{"a priority below every group goes in the lowest", two, []*corev1.Pod{pod("low", i32(-5), nil)}, [][]string{{"low"}, nil}},
		{"a priority on a boundary belongs to that group", three,
			[]*corev1.Pod{pod("ten", i32(10), nil), pod("hundred", i32(100), nil), pod("between", i32(999), nil), pod("top", i32(5000), nil)},
			[][]string{{"ten"}, {"hundred", "between"}, {"top"}}},
		{"no groups take no pods", nil, []*corev1.Pod{pod("a", nil, nil)}, [][]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := GroupPods(tc.groups, tc.pods)
			names := [][]string{}
			for i, g := range got {
				if g.Priority != tc.groups[i].Priority || g.GracePeriodSeconds != tc.groups[i].GracePeriodSeconds {
					t.Errorf("group %d = %+v, want the policy's %+v", i, g, tc.groups[i])
				}
				var n []string
				for _, p := range g.Pods {
					n = append(n, p.Name)
				}
				names = append(names, n)
			}
			if !reflect.DeepEqual(names, tc.want) {
				t.Errorf("GroupPods = %v, want %v", names, tc.want)
			}
			if len(tc.groups) > 0 && tc.groups[0].Pods != nil {
				t.Error("GroupPods changed its input")
			}
		})
	}
}

func TestGracePeriod(t *testing.T) {
	t.Parallel()
	g := Group{GracePeriodSeconds: 20}
	for _, tc := range []struct {
		name string
		own  *int64
		want int64
	}{
		{"a pod without its own period gets the group's", nil, 20},
		{"a pod with a longer period gets the group's", i64(30), 20},
		{"a pod with a shorter period keeps its own", i64(5), 5},
		{"a pod with no grace keeps 0", i64(0), 0},
	} {
		if got := GracePeriod(pod("p", nil, tc.own), g); got != tc.want {
			t.Errorf("%s: GracePeriod = %d, want %d", tc.name, got, tc.want)
		}
	}
}
