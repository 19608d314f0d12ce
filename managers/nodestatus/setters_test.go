package nodestatus

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type wantCondition struct {
	status  corev1.ConditionStatus
	reason  string
	message string
}

var (
	noMemoryPressure = wantCondition{corev1.ConditionFalse, ReasonSufficientMemory, "kubelet has sufficient memory available"}
	memoryPressure   = wantCondition{corev1.ConditionTrue, ReasonInsufficientMemory, "kubelet has insufficient memory available"}
	noDiskPressure   = wantCondition{corev1.ConditionFalse, ReasonNoDiskPressure, "kubelet has no disk pressure"}
	diskPressure     = wantCondition{corev1.ConditionTrue, ReasonDiskPressure, "kubelet has disk pressure"}
	noPIDPressure    = wantCondition{corev1.ConditionFalse, ReasonSufficientPID, "kubelet has sufficient PID available"}
	pidPressure      = wantCondition{corev1.ConditionTrue, ReasonInsufficientPID, "kubelet has insufficient PID available"}
	ready            = wantCondition{corev1.ConditionTrue, ReasonReady, "kubelet is posting ready status"}
)

func TestSetNodeStatusConditions(t *testing.T) {
	t.Parallel()
	usage := func(edit func(u *Usage)) *Usage {
		u := healthyUsage()
		edit(u)
		return u
	}
	tests := []struct {
		name       string
		in         inputs
		thresholds Thresholds
		want       [4]wantCondition // memory, disk, pid, ready
	}{
		{
			name: "a healthy node is ready with no pressure",
			in:   inputs{machine: testMachine(), usage: healthyUsage()},
			want: [4]wantCondition{noMemoryPressure, noDiskPressure, noPIDPressure, ready},
		},
		{
			name: "an unhealthy agent makes the node not ready with the health message",
			in:   inputs{machine: testMachine(), usage: healthyUsage(), health: errors.New("PLEG is not healthy: pleg was last seen active 3m5s ago")},
			want: [4]wantCondition{noMemoryPressure, noDiskPressure, noPIDPressure,
				{corev1.ConditionFalse, ReasonNotReady, "PLEG is not healthy: pleg was last seen active 3m5s ago"}},
		},
		{
			name: "less than 100Mi of available memory is memory pressure",
			in:   inputs{machine: testMachine(), usage: usage(func(u *Usage) { u.MemoryAvailableBytes = 99 << 20 })},
			want: [4]wantCondition{memoryPressure, noDiskPressure, noPIDPressure, ready},
		},
		{
			name: "exactly 100Mi of available memory is no pressure",
			in:   inputs{machine: testMachine(), usage: usage(func(u *Usage) { u.MemoryAvailableBytes = 100 << 20 })},
			want: [4]wantCondition{noMemoryPressure, noDiskPressure, noPIDPressure, ready},
		},
		{
			name: "less than 10% of the disk available is disk pressure",
			in:   inputs{machine: testMachine(), usage: usage(func(u *Usage) { u.DiskAvailableBytes = 9 * gi })},
			want: [4]wantCondition{noMemoryPressure, diskPressure, noPIDPressure, ready},
		},
		{
			name: "less than 5% of the inodes free is disk pressure",
			in:   inputs{machine: testMachine(), usage: usage(func(u *Usage) { u.InodesFree = 49_999 })},
			want: [4]wantCondition{noMemoryPressure, diskPressure, noPIDPressure, ready},
		},
		{
			name: "a filesystem without an inode count has no inode pressure",
			in:   inputs{machine: testMachine(), usage: usage(func(u *Usage) { u.InodesFree, u.Inodes = 0, 0 })},
			want: [4]wantCondition{noMemoryPressure, noDiskPressure, noPIDPressure, ready},
		},
		{
			name: "less than 10% of the pids left is pid pressure",
			in:   inputs{machine: testMachine(), usage: usage(func(u *Usage) { u.PIDMax, u.Processes = 1000, 901 })},
			want: [4]wantCondition{noMemoryPressure, noDiskPressure, pidPressure, ready},
		},
		{
			name:       "a negative threshold turns its check off",
			in:         inputs{machine: testMachine(), usage: usage(func(u *Usage) { u.MemoryAvailableBytes = 0 })},
			thresholds: Thresholds{MemoryAvailableBytes: -1},
			want:       [4]wantCondition{noMemoryPressure, noDiskPressure, noPIDPressure, ready},
		},
		{
			name: "unknown usage reports no pressure",
			in:   inputs{machine: testMachine()},
			want: [4]wantCondition{noMemoryPressure, noDiskPressure, noPIDPressure, ready},
		},
		{
			name: "a node whose capacity was never read is not ready",
			in:   inputs{usage: healthyUsage()},
			want: [4]wantCondition{noMemoryPressure, noDiskPressure, noPIDPressure,
				{corev1.ConditionFalse, ReasonNotReady, "missing node capacity for resources: cpu, memory, pods, ephemeral-storage"}},
		},
		{
			name: "an unhealthy agent and missing capacity are both reported",
			in:   inputs{health: errors.New("container runtime is down")},
			want: [4]wantCondition{noMemoryPressure, noDiskPressure, noPIDPressure,
				{corev1.ConditionFalse, ReasonNotReady, "container runtime is down,missing node capacity for resources: cpu, memory, pods, ephemeral-storage"}},
		},
	}
	types := [4]corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{NodeName: "n", Pressure: tt.thresholds}.withDefaults()
			tt.in.now = mt(t0)
			node := &corev1.Node{}
			setNodeStatus(node, cfg, tt.in)
			if len(node.Status.Conditions) != 4 {
				t.Fatalf("got %d conditions, want 4: %+v", len(node.Status.Conditions), node.Status.Conditions)
			}
			for i, typ := range types {
				c := node.Status.Conditions[i]
				got := wantCondition{c.Status, c.Reason, c.Message}
				if c.Type != typ || got != tt.want[i] {
					t.Errorf("condition %d: got %s %+v, want %s %+v", i, c.Type, got, typ, tt.want[i])
				}
				if !c.LastHeartbeatTime.Equal(&tt.in.now) || !c.LastTransitionTime.Equal(&tt.in.now) {
					t.Errorf("%s: heartbeat %v, transition %v; want both %v", typ, c.LastHeartbeatTime, c.LastTransitionTime, tt.in.now)
				}
			}
		})
	}
}

func TestSetNodeStatusTransitionTimes(t *testing.T) {
	t.Parallel()
	cfg := Config{NodeName: "n"}.withDefaults()
	node := &corev1.Node{}
	t1, t2 := t0.Add(10*time.Second), t0.Add(20*time.Second)
	setNodeStatus(node, cfg, inputs{now: mt(t0), machine: testMachine(), usage: healthyUsage()})
	setNodeStatus(node, cfg, inputs{now: mt(t1), machine: testMachine(), usage: healthyUsage()})
	for _, c := range node.Status.Conditions {
		if !c.LastHeartbeatTime.Time.Equal(t1) || !c.LastTransitionTime.Time.Equal(t0) {
			t.Errorf("unchanged %s: heartbeat %v, transition %v; want %v, %v", c.Type, c.LastHeartbeatTime, c.LastTransitionTime, t1, t0)
		}
	}
	setNodeStatus(node, cfg, inputs{now: mt(t2), machine: testMachine(), usage: healthyUsage(), health: errors.New("down")})
	for _, c := range node.Status.Conditions {
		wantTransition := t0
		if c.Type == corev1.NodeReady {
			wantTransition = t2
		}
		if !c.LastHeartbeatTime.Time.Equal(t2) || !c.LastTransitionTime.Time.Equal(wantTransition) {
			t.Errorf("%s: heartbeat %v, transition %v; want %v, %v", c.Type, c.LastHeartbeatTime, c.LastTransitionTime, t2, wantTransition)
		}
	}
}

func TestSetNodeStatusKeepsOthersConditionsAndResources(t *testing.T) {
	t.Parallel()
	cfg := Config{NodeName: "n"}.withDefaults()
	network := corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "RouteCreated", LastTransitionTime: mt(t0)}
	node := &corev1.Node{Status: corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{network},
		Capacity:   corev1.ResourceList{"example.com/gpu": resource.MustParse("2")},
	}}
	setNodeStatus(node, cfg, inputs{now: mt(t0.Add(time.Minute)), machine: testMachine(), usage: healthyUsage()})
	if got := node.Status.Conditions[0]; got != network {
		t.Errorf("got %+v, want the network condition untouched", got)
	}
	if q := node.Status.Capacity["example.com/gpu"]; q.Value() != 2 {
		t.Errorf("extended resource capacity = %v, want 2", q.String())
	}
}

func TestSetNodeStatusFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       Config
		machine   *Machine
		wantAddrs []corev1.NodeAddress
	}{
		{
			name:    "a loopback node IP is the internal IP",
			cfg:     Config{NodeName: "n", NodeIP: "127.0.0.1", Hostname: "host-a"},
			machine: testMachine(),
			wantAddrs: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
				{Type: corev1.NodeHostName, Address: "host-a"}},
		},
		{
			name:    "without a node IP the default route's address is the internal IP",
			cfg:     Config{NodeName: "n"},
			machine: testMachine(),
			wantAddrs: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"},
				{Type: corev1.NodeHostName, Address: "n"}},
		},
		{
			name:      "without any address only the host name is reported",
			cfg:       Config{NodeName: "n"},
			machine:   func() *Machine { m := testMachine(); m.HostIP = nil; return m }(),
			wantAddrs: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "n"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			node := &corev1.Node{}
			setNodeStatus(node, tt.cfg.withDefaults(), inputs{now: mt(t0), machine: tt.machine, runtimeVersion: "containerd://2.4.2"})
			if len(node.Status.Addresses) != len(tt.wantAddrs) {
				t.Fatalf("addresses %v, want %v", node.Status.Addresses, tt.wantAddrs)
			}
			for i := range tt.wantAddrs {
				if node.Status.Addresses[i] != tt.wantAddrs[i] {
					t.Errorf("addresses %v, want %v", node.Status.Addresses, tt.wantAddrs)
				}
			}
			checkCapacityAndInfo(t, node)
		})
	}
}

// checkCapacityAndInfo checks what testMachine and the default Config give.
func checkCapacityAndInfo(t *testing.T, node *corev1.Node) {
	t.Helper()
	want := map[corev1.ResourceName]string{"cpu": "4", "memory": "8Gi", "ephemeral-storage": "100Gi", "pods": "110"}
	for name, w := range want {
		for _, list := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
			if q, ok := list[name]; !ok || q.Cmp(resource.MustParse(w)) != 0 {
				t.Errorf("%s = %v, want %s", name, list[name], w)
			}
		}
	}
	info := node.Status.NodeInfo
	wantInfo := corev1.NodeSystemInfo{
		MachineID: "machine-1", SystemUUID: "uuid-1", BootID: "boot-1", KernelVersion: "6.8.0-test",
		OSImage: "Test Linux 1.0", ContainerRuntimeVersion: "containerd://2.4.2", KubeletVersion: DefaultAgentVersion,
		OperatingSystem: "linux", Architecture: info.Architecture,
	}
	if info.Architecture == "" || info != wantInfo {
		t.Errorf("nodeInfo %+v, want %+v", info, wantInfo)
	}
	if p := node.Status.DaemonEndpoints.KubeletEndpoint.Port; p != DefaultKubeletPort {
		t.Errorf("kubelet endpoint port %d, want %d", p, DefaultKubeletPort)
	}
}

func TestStatusChanged(t *testing.T) {
	t.Parallel()
	base := func() *corev1.NodeStatus {
		n := &corev1.Node{}
		setNodeStatus(n, Config{NodeName: "n"}.withDefaults(), inputs{now: mt(t0), machine: testMachine(), usage: healthyUsage()})
		return &n.Status
	}
	tests := []struct {
		name string
		edit func(s *corev1.NodeStatus)
		want bool
	}{
		{"an identical status has not changed", func(*corev1.NodeStatus) {}, false},
		{"newer heartbeats alone are no change", func(s *corev1.NodeStatus) {
			for i := range s.Conditions {
				s.Conditions[i].LastHeartbeatTime = mt(t0.Add(time.Hour))
			}
		}, false},
		{"conditions in another order are no change", func(s *corev1.NodeStatus) {
			s.Conditions[0], s.Conditions[3] = s.Conditions[3], s.Conditions[0]
		}, false},
		{"an equal quantity written differently is no change", func(s *corev1.NodeStatus) {
			s.Capacity[corev1.ResourceMemory] = resource.MustParse("8388608Ki")
		}, false},
		{"a new message is a change", func(s *corev1.NodeStatus) { s.Conditions[3].Message = "other" }, true},
		{"a new transition time is a change", func(s *corev1.NodeStatus) {
			s.Conditions[1].LastTransitionTime = metav1.NewTime(t0.Add(time.Second))
		}, true},
		{"a lost condition is a change", func(s *corev1.NodeStatus) { s.Conditions = s.Conditions[1:] }, true},
		{"a new capacity is a change", func(s *corev1.NodeStatus) { s.Capacity[corev1.ResourceCPU] = resource.MustParse("8") }, true},
		{"a new boot ID is a change", func(s *corev1.NodeStatus) { s.NodeInfo.BootID = "boot-2" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			old, cur := base(), base()
			tt.edit(cur)
			if got := statusChanged(old, cur); got != tt.want {
				t.Errorf("statusChanged = %v, want %v", got, tt.want)
			}
		})
	}
}
