// Package nodestatus keeps this node's Node object and its Lease in the
// Kubernetes API server truthful: the kubelet's kubelet_node_status.go,
// nodestatus setters and node lease, cut down to one small Manager.
//
// # Data flow
//
// Reporter.Run does three things, in order:
//
//  1. Registration. It creates the Node (labels kubernetes.io/hostname,
//     kubernetes.io/os, kubernetes.io/arch, their beta.kubernetes.io
//     twins and Config.Labels; Config.Taints; the full status). When the
//     Node exists already (the agent restarted) it adds the labels the
//     Node lacks, leaves its taints alone (as the kubelet's
//     registerWithTaints) and keeps the object: it never deletes or
//     recreates a Node. A failed
//     registration is retried with backoff (100ms doubling to 7s) until it
//     succeeds or ctx ends.
//  2. The Lease. The upstream lease controller
//     (k8s.io/component-helpers/apimachinery/lease) keeps the Lease named
//     after the node in kube-node-lease: held by the node, LeaseDuration
//     40s, renewed every RenewInterval (10s, jitter 0.04), owned by the Node
//     so that deleting the Node deletes it. The node controller reads the
//     Lease, not the status, to decide that a node is alive.
//  3. The status loop. Every StatusUpdateFrequency (10s) it reads the
//     MachineInfo (capacity, identity, usage), the RuntimeInfo (the
//     containerRuntimeVersion) and the HealthSource, gets the Node (the
//     first try from the API server's cache) and computes its status. It
//     patches nodes/status with a strategic merge patch only when
//     something other than heartbeat times changed, or when
//     StatusReportFrequency (5m) has passed since the last post; one sync
//     tries five times (a conflict or an error gets a fresh GET). A Node
//     that was deleted is registered again at the next tick.
//
// Everything goes through Get, Create, Update and Patch of this node's own
// Node and Lease, so the node's own credentials (system:node:NAME in
// system:nodes, under the Node authorizer and NodeRestriction) suffice;
// nothing is listed.
//
// # Status
//
// Addresses are InternalIP and Hostname. With a nodeip.Source (SetNodeIPs;
// nodekit always sets the one its pods' hostIP and the downward API read)
// the InternalIP addresses are the source's, one per family, and an
// unknown address keeps the Node's; without one, Config.NodeIP (a loopback
// address allowed), else Machine.HostIP. Changed addresses replace the
// list whole, as the kubelet's patch does. Capacity and allocatable
// hold cpu, memory, ephemeral-storage (the filesystem of RootDir), pods
// (MaxPods) and one hugepages-<size> per page size the kernel has (its
// reserved huge pages, 0 when none; allocatable memory is less their
// total, as the kubelet's); allocatable is less the reservations and hard
// eviction thresholds. Other resources in the Node are kept. nodeInfo holds the machine's identity, the runtime version
// ("containerd://2.4.2") and kubeletVersion = Config.AgentVersion.
//
// Conditions, in the kubelet's order and with its reasons:
//
//   - MemoryPressure: MemAvailable below 100Mi.
//   - DiskPressure: less than 10% of RootDir's filesystem available, or
//     less than 5% of its inodes free.
//   - PIDPressure: less than 10% of the PID limit (the lower of pid_max and
//     threads-max) left. The kubelet has no default for this one.
//   - Ready: True "KubeletReady" while HealthSource.Ready returns nil;
//     False "KubeletNotReady" with the error's message otherwise, or when a
//     capacity is missing. It is last, as the kubelet keeps it. A
//     HealthSource that is also a HealthNotifier (nodekit's agent is: its
//     runtime check signals each change) has the status computed and posted
//     at once on a change, not at the next tick: a hung runtime shows as
//     Ready False within seconds of the check failing. The runtime's
//     Version is read with a 2s deadline, and not at all while the agent is
//     unhealthy and a version is known, so a hung runtime never holds the
//     post back.
//
// Each condition's lastHeartbeatTime is the time of the computation and its
// lastTransitionTime changes only when its status does. The thresholds are
// the kubelet's hard eviction defaults and are set in Config.Pressure;
// there is no transition period: an eviction manager would own these
// conditions once nodekit has one. Conditions others set (e.g.
// NetworkUnavailable) are kept.
//
// # Concurrency
//
// Run is one goroutine plus the lease controller's goroutine, which it
// waits for before returning. The status is posted from Run's goroutine,
// never from the agent's: an unreachable API server makes the Reporter log
// and retry, and never blocks anyone else. Node is safe for concurrent
// use. MachineInfo, RuntimeInfo and HealthSource are called from Run's
// goroutine (setLeaseOwner runs on the lease goroutine but reads only the
// stored Node).
//
// # Time
//
// Timestamps, the update ticker and the registration backoff use the
// clock.WithTicker passed to New; the lease controller stamps renewTime
// with it too, but its renew loop runs on real time (wait.JitterUntil).
//
// # Replacing it
//
// Provide another Manager (fx.Decorate or fx.Replace) to report the node
// differently, or keep the Reporter and provide another MachineInfo (a VM's
// or sandbox's view of the machine) or HealthSource. Module provides the
// Reporter as Manager and HostMachine as MachineInfo; the composition root
// provides the kubernetes.Interface, the RuntimeInfo, the HealthSource, the
// clock, the logger and the Config.
package nodestatus
