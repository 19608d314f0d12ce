package nodestatus

import (
	goruntime "runtime"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// inputs are what one status computation reads: gathered once per sync so
// that every retry of the post shows the same status.
type inputs struct {
	// now is the heartbeat time.
	now metav1.Time
	// machine is nil when it could not be read; the fields it fills keep
	// their last values.
	machine *Machine
	// usage is nil when it could not be read; no pressure is reported then.
	usage *Usage
	// runtimeVersion is "" until the runtime first answers.
	runtimeVersion string
	// health is the HealthSource's verdict.
	health error
	// gate is the ReadyGate's verdict (nil without one).
	gate error
	// pressure, when not nil, are the PressureSource's conditions, used
	// instead of usage and the thresholds.
	pressure map[corev1.NodeConditionType]bool
	// nodeIPs is what the Reporter's nodeip.Source said, when it has one.
	nodeIPs struct {
		set bool
		ips []string
		err error
	}
}

// pressure describes one pressure condition.
type pressure struct {
	typ                       corev1.NodeConditionType
	trueReason, trueMessage   string
	falseReason, falseMessage string
	// under reports whether the usage crosses the threshold.
	under func(u *Usage, t Thresholds) bool
}

// pressureConditions returns the pressure conditions in the kubelet's order.
func pressureConditions() []pressure {
	return []pressure{
		{
			typ:        corev1.NodeMemoryPressure,
			trueReason: ReasonInsufficientMemory, trueMessage: "kubelet has insufficient memory available",
			falseReason: ReasonSufficientMemory, falseMessage: "kubelet has sufficient memory available",
			under: func(u *Usage, t Thresholds) bool {
				return t.MemoryAvailableBytes >= 0 && u.MemoryAvailableBytes < t.MemoryAvailableBytes
			},
		},
		{
			typ:        corev1.NodeDiskPressure,
			trueReason: ReasonDiskPressure, trueMessage: "kubelet has disk pressure",
			falseReason: ReasonNoDiskPressure, falseMessage: "kubelet has no disk pressure",
			under: func(u *Usage, t Thresholds) bool {
				return below(u.DiskAvailableBytes, u.DiskCapacityBytes, t.DiskAvailablePercent) ||
					below(u.InodesFree, u.Inodes, t.InodesFreePercent)
			},
		},
		{
			typ:        corev1.NodePIDPressure,
			trueReason: ReasonInsufficientPID, trueMessage: "kubelet has insufficient PID available",
			falseReason: ReasonSufficientPID, falseMessage: "kubelet has sufficient PID available",
			under: func(u *Usage, t Thresholds) bool {
				return below(u.PIDMax-u.Processes, u.PIDMax, t.PIDAvailablePercent)
			},
		},
	}
}

// below reports whether left is less than percent of total. An unknown
// total (0) or a negative percent never is.
func below(left, total int64, percent int) bool {
	if total <= 0 || percent < 0 {
		return false
	}
	return left*100 < int64(percent)*total
}

// setNodeStatus writes everything the node reports into node.Status:
// addresses, capacity, node info, the daemon endpoint and the conditions
// (the pressure conditions, then Ready, which the kubelet keeps last).
// Fields that others own (other conditions, other resources) are kept.
func setNodeStatus(node *corev1.Node, cfg Config, in inputs) {
	if in.nodeIPs.set {
		setAddressesFrom(node, cfg, in.nodeIPs.ips, in.nodeIPs.err)
	} else {
		setAddresses(node, cfg, in.machine)
	}
	setCapacity(node, cfg, in.machine)
	setNodeInfo(node, cfg, in)
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(cfg.KubeletPort)
	for _, p := range pressureConditions() {
		under := in.usage != nil && p.under(in.usage, cfg.Pressure)
		if in.pressure != nil {
			under = in.pressure[p.typ]
		}
		c := corev1.NodeCondition{Type: p.typ, Status: corev1.ConditionFalse, Reason: p.falseReason, Message: p.falseMessage}
		if under {
			c = corev1.NodeCondition{Type: p.typ, Status: corev1.ConditionTrue, Reason: p.trueReason, Message: p.trueMessage}
		}
		setCondition(&node.Status, c, in.now)
	}
	setCondition(&node.Status, readyCondition(&node.Status, in.health, in.gate), in.now)
}

func setAddresses(node *corev1.Node, cfg Config, m *Machine) {
	ip := cfg.NodeIP
	if ip == "" && m != nil && m.HostIP != nil {
		ip = m.HostIP.String()
	}
	if ip == "" && m == nil {
		return // unknown for now: keep what the node reports
	}
	var addrs []corev1.NodeAddress
	if ip != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: cfg.Hostname})
	node.Status.Addresses = addrs
}

// setAddressesFrom reports ips as the node's InternalIP addresses, as the
// kubelet does without a cloud provider; while they are unknown (err) the
// node keeps the addresses it has, or has only its Hostname address.
func setAddressesFrom(node *corev1.Node, cfg Config, ips []string, err error) {
	if err != nil || len(ips) == 0 {
		if len(node.Status.Addresses) == 0 {
			node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: cfg.Hostname}}
		}
		return
	}
	addrs := make([]corev1.NodeAddress, 0, len(ips)+1)
	for _, ip := range ips {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: cfg.Hostname})
	node.Status.Addresses = addrs
}

func setCapacity(node *corev1.Node, cfg Config, m *Machine) {
	if m == nil {
		return
	}
	ours := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(m.NumCPU), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(m.MemoryBytes, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(m.EphemeralStorageBytes, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(cfg.MaxPods), resource.DecimalSI),
	}
	for name, q := range m.HugePages {
		ours[name] = q
	}
	capacity, allocatable := node.Status.Capacity.DeepCopy(), node.Status.Allocatable.DeepCopy()
	if capacity == nil {
		capacity = corev1.ResourceList{}
	}
	if allocatable == nil {
		allocatable = corev1.ResourceList{}
	}
	alloc := Allocatable(ours, cfg.Reserved, cfg.EvictionHard)
	for name, q := range ours {
		capacity[name] = q
		allocatable[name] = alloc[name]
	}
	node.Status.Capacity, node.Status.Allocatable = capacity, allocatable
}

func setNodeInfo(node *corev1.Node, cfg Config, in inputs) {
	info := &node.Status.NodeInfo
	if m := in.machine; m != nil {
		info.MachineID, info.SystemUUID, info.BootID = m.MachineID, m.SystemUUID, m.BootID
		info.KernelVersion, info.OSImage = m.KernelVersion, m.OSImage
	}
	if in.runtimeVersion != "" {
		info.ContainerRuntimeVersion = in.runtimeVersion
	}
	info.KubeletVersion = cfg.AgentVersion
	info.KubeProxyVersion = ""
	info.OperatingSystem = goruntime.GOOS
	info.Architecture = goruntime.GOARCH
}

// readyCondition is Ready True unless the agent is unhealthy, the ready
// gate says not ready (the node is shutting down) or the node lacks a
// capacity the scheduler needs; the message lists them in that order, as
// the kubelet's.
func readyCondition(status *corev1.NodeStatus, health, gate error) corev1.NodeCondition {
	var problems []string
	if health != nil {
		problems = append(problems, health.Error())
	}
	if gate != nil {
		problems = append(problems, gate.Error())
	}
	var missing []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
		if _, ok := status.Capacity[name]; !ok {
			missing = append(missing, string(name))
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "missing node capacity for resources: "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
			Reason: ReasonNotReady, Message: strings.Join(problems, ",")}
	}
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		Reason: ReasonReady, Message: "kubelet is posting ready status"}
}

// setCondition puts want into status with heartbeat now. Its transition
// time is now when its status differs from the current one (or it is new),
// else the current one's.
func setCondition(status *corev1.NodeStatus, want corev1.NodeCondition, now metav1.Time) {
	want.LastHeartbeatTime, want.LastTransitionTime = now, now
	for i := range status.Conditions {
		c := &status.Conditions[i]
		if c.Type != want.Type {
			continue
		}
		if c.Status == want.Status {
			want.LastTransitionTime = c.LastTransitionTime
		}
		*c = want
		return
	}
	status.Conditions = append(status.Conditions, want)
}

// statusChanged reports whether anything but heartbeat times differs.
func statusChanged(old, cur *corev1.NodeStatus) bool {
	if !conditionsEqual(old.Conditions, cur.Conditions) {
		return true
	}
	o, c := old.DeepCopy(), cur.DeepCopy()
	o.Conditions, c.Conditions = nil, nil
	return !apiequality.Semantic.DeepEqual(o, c)
}

func conditionsEqual(a, b []corev1.NodeCondition) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = withoutHeartbeats(a), withoutHeartbeats(b)
	return apiequality.Semantic.DeepEqual(a, b)
}

// withoutHeartbeats returns a copy of conds sorted by type, heartbeat times
// zeroed.
func withoutHeartbeats(conds []corev1.NodeCondition) []corev1.NodeCondition {
	out := make([]corev1.NodeCondition, len(conds))
	copy(out, conds)
	for i := range out {
		out[i].LastHeartbeatTime = metav1.Time{}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}
