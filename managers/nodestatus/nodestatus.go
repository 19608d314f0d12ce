package nodestatus

import (
	"context"
	"net"

	corev1 "k8s.io/api/core/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Manager keeps this node's Node object and its Lease in the API server.
type Manager interface {
	// Run registers the node, then posts its status and renews its lease
	// until ctx ends. It blocks, never gives up on an unreachable API server
	// and returns nil when ctx ends; it returns an error only for an invalid
	// configuration. Call it once.
	Run(ctx context.Context) error
	// Node returns a copy of the Node object as the API server last returned
	// it after a registration or a status post, or nil before the first one.
	// It does not block and is safe for concurrent use.
	Node() *corev1.Node
}

// MachineInfo reads the facts about the machine that the node status shows.
// HostMachine reads the real machine; tests and embedders with their own view
// of the machine (a VM, a sandbox) provide their own. Implementations must be
// safe for concurrent use; the Reporter calls both methods every status
// update (10s), so they should be cheap.
type MachineInfo interface {
	// Info returns what the machine has and who it is. The caller owns the
	// result.
	Info() (*Machine, error)
	// Usage returns what the machine has left. The caller owns the result.
	Usage() (*Usage, error)
}

// Machine is what a machine has and who it is: the node's capacity and
// nodeInfo.
type Machine struct {
	// NumCPU is the number of logical CPUs.
	NumCPU int
	// MemoryBytes is the total memory (MemTotal).
	MemoryBytes int64
	// EphemeralStorageBytes is the size of the filesystem holding the
	// agent's root directory.
	EphemeralStorageBytes int64
	// HugePages are the huge pages the kernel keeps, by resource name
	// (hugepages-2Mi, hugepages-1Gi), in bytes: one entry per page size the
	// kernel supports, 0 when none are reserved, as the kubelet reports
	// them. Nil when the kernel has none.
	HugePages corev1.ResourceList
	// MachineID is /etc/machine-id.
	MachineID string
	// SystemUUID is the SMBIOS product UUID, empty when unreadable.
	SystemUUID string
	// BootID changes at every boot.
	BootID string
	// KernelVersion is the running kernel's release, e.g. "6.8.0-45-generic".
	KernelVersion string
	// OSImage is the distribution's pretty name, e.g. "Ubuntu 24.04.1 LTS".
	OSImage string
	// HostIP is the address of the interface of the default route; the
	// node's InternalIP when Config.NodeIP is empty. Nil when unknown.
	HostIP net.IP
}

// Usage is what a machine has left: the inputs of the pressure conditions.
type Usage struct {
	// MemoryAvailableBytes is the memory available without swapping
	// (MemAvailable).
	MemoryAvailableBytes int64
	// DiskAvailableBytes is the space left to unprivileged users on the
	// filesystem of the agent's root directory.
	DiskAvailableBytes int64
	// DiskCapacityBytes is that filesystem's size.
	DiskCapacityBytes int64
	// InodesFree is that filesystem's free inodes.
	InodesFree int64
	// Inodes is that filesystem's inode count; 0 when it has no fixed count.
	Inodes int64
	// PIDMax is the most processes and threads the kernel allows.
	PIDMax int64
	// Processes is the number of processes and threads now.
	Processes int64
}

// RuntimeInfo names the container runtime for the node's
// containerRuntimeVersion. noderuntime.Runtime satisfies it.
type RuntimeInfo interface {
	// Version returns the runtime's name and version.
	Version(ctx context.Context) (*noderuntime.VersionInfo, error)
}

// HealthSource says whether the agent can run pods: its sync loop turns, its
// PLEG keeps up and its container runtime is ready. It must be safe for
// concurrent use and must not block.
type HealthSource interface {
	// Ready returns nil when the agent is healthy, else an error whose
	// message becomes the Ready condition's message.
	Ready() error
}

// HealthNotifier is an optional capability of a HealthSource: its channel
// receives a value when the verdict of Ready may have changed, and the
// Reporter then computes and posts the status at once instead of at its
// next StatusUpdateFrequency tick, so that a hung container runtime shows
// in the Ready condition within seconds. The channel must be the same on
// every call and is never closed.
type HealthNotifier interface {
	HealthChanged() <-chan struct{}
}

// The condition reasons, as the kubelet reports them.
const (
	ReasonReady              = "KubeletReady"
	ReasonNotReady           = "KubeletNotReady"
	ReasonSufficientMemory   = "KubeletHasSufficientMemory"
	ReasonInsufficientMemory = "KubeletHasInsufficientMemory"
	ReasonNoDiskPressure     = "KubeletHasNoDiskPressure"
	ReasonDiskPressure       = "KubeletHasDiskPressure"
	ReasonSufficientPID      = "KubeletHasSufficientPID"
	ReasonInsufficientPID    = "KubeletHasInsufficientPID"
)
