package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is what the agent needs from a container runtime. The default
// implementation is runtime/cri; an embedder can provide any other.
//
// Every method is safe for concurrent use by different pods; the agent never
// calls SyncPod or KillPod for the same pod concurrently.
type Runtime interface {
	// Type names the runtime ("containerd", "cri-o", "sim"); it prefixes
	// container IDs as in "containerd://<id>".
	Type() string
	// Version returns the runtime's name and version as reported by it.
	Version(ctx context.Context) (*VersionInfo, error)
	// Status reports whether the runtime and its network are ready. A nil
	// error with Ready false is an unhealthy runtime that answered.
	Status(ctx context.Context) (*RuntimeStatus, error)
	// GetPods lists the pods known to the runtime. With all false only pods
	// with a running sandbox or container are returned. The caller owns the
	// returned objects.
	GetPods(ctx context.Context, all bool) ([]*Pod, error)
	// GetPodStatus inspects one pod: all its sandboxes and containers,
	// rebuilt from the runtime's labels and annotations. It returns an empty
	// status, not an error, for a pod the runtime does not know.
	GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*PodStatus, error)
	// SyncPod makes the runtime state of pod match its spec: it creates the
	// sandbox, pulls images, starts and kills containers as needed. status is
	// the latest status from the PLEG cache.
	SyncPod(ctx context.Context, pod *corev1.Pod, status *PodStatus) *SyncResult
	// KillPod stops every container and sandbox of the pod. pod may be nil
	// for a pod known only to the runtime; gracePeriodOverride, when set,
	// replaces the pod's own grace period.
	KillPod(ctx context.Context, pod *corev1.Pod, runningPod *Pod, gracePeriodOverride *int64) error
}

// GarbageCollector is an optional capability of a Runtime: removing dead
// containers and sandboxes. The agent calls it from housekeeping when the
// runtime implements it.
type GarbageCollector interface {
	// GarbageCollect removes exited containers beyond the newest one per
	// container name, and every sandbox and container of pods for which
	// isPodRemoved returns true.
	GarbageCollect(ctx context.Context, isPodRemoved func(types.UID) bool) error
}

// VersionInfo names a runtime and its version.
type VersionInfo struct {
	// RuntimeName is the runtime's own name, e.g. "containerd".
	RuntimeName string
	// RuntimeVersion is its version, e.g. "v2.4.2".
	RuntimeVersion string
	// APIVersion is the CRI API version it speaks, e.g. "v1".
	APIVersion string
}

// String formats the version as the node status shows it ("containerd://2.4.2").
func (v *VersionInfo) String() string {
	return v.RuntimeName + "://" + strings.TrimPrefix(v.RuntimeVersion, "v")
}

// RuntimeStatus is the readiness of a runtime.
type RuntimeStatus struct {
	// Ready is true when the runtime can run containers.
	Ready bool
	// NetworkReady is true when the runtime's pod network is ready.
	NetworkReady bool
	// Message explains a false condition.
	Message string
	// NetworkMessage explains a false NetworkReady alone, as the kubelet
	// prints the runtime's condition: "NetworkReady=false reason:R
	// message:M". Empty while the network is ready.
	NetworkMessage string
}

// ContainerID is a runtime-qualified container ID ("containerd://abc").
type ContainerID struct {
	// Type is the runtime type, e.g. "containerd".
	Type string
	// ID is the runtime's own ID.
	ID string
}

// String formats the ID as "type://id", as container statuses show it.
func (c ContainerID) String() string {
	if c.ID == "" {
		return ""
	}
	return c.Type + "://" + c.ID
}

// IsEmpty reports whether the ID is unset.
func (c ContainerID) IsEmpty() bool { return c.ID == "" }

// ParseContainerID parses "type://id".
func ParseContainerID(s string) (ContainerID, error) {
	typ, id, ok := strings.Cut(s, "://")
	if !ok || typ == "" || id == "" {
		return ContainerID{}, fmt.Errorf("invalid container ID %q: want type://id", s)
	}
	return ContainerID{Type: typ, ID: id}, nil
}

// ContainerState is the state of a container as the runtime reports it.
type ContainerState string

// Container states.
const (
	ContainerStateCreated ContainerState = "created"
	ContainerStateRunning ContainerState = "running"
	ContainerStateExited  ContainerState = "exited"
	ContainerStateUnknown ContainerState = "unknown"
)

// Pod is a pod as the runtime sees it: its sandboxes and containers grouped by
// pod UID. Pods from GetPods carry only what a list call returns.
type Pod struct {
	// ID is the pod UID.
	ID types.UID
	// Name and Namespace are the pod's, from the runtime's labels.
	Name, Namespace string
	// Containers are the pod's application containers.
	Containers []*Container
	// Sandboxes are the pod's sandboxes, newest first.
	Sandboxes []*Container
}

// Container is a container or a sandbox as a list call reports it.
type Container struct {
	// ID is the runtime-qualified ID.
	ID ContainerID
	// Name is the container's name in the pod spec (empty for a sandbox).
	Name string
	// Image is the image the container was created from.
	Image string
	// ImageID is the runtime's image reference.
	ImageID string
	// Hash is the spec hash recorded when the container was created.
	Hash uint64
	// State is the container's state.
	State ContainerState
	// CreatedAt is when the runtime created it.
	CreatedAt time.Time
}

// PodStatus is the runtime status of one pod: every sandbox and container the
// runtime knows for it. It is what the PLEG stores in its cache.
type PodStatus struct {
	// ID is the pod UID.
	ID types.UID
	// Name and Namespace are the pod's.
	Name, Namespace string
	// IPs are the pod's addresses, from the newest ready sandbox.
	IPs []string
	// ContainerStatuses are all the pod's containers, newest first.
	ContainerStatuses []*ContainerStatus
	// SandboxStatuses are all the pod's sandboxes, newest first.
	SandboxStatuses []*runtimeapi.PodSandboxStatus
	// TimeStamp is when this status was observed.
	TimeStamp time.Time
}

// ContainerStatus is one container's runtime status.
type ContainerStatus struct {
	// ID is the runtime-qualified ID.
	ID ContainerID
	// Name is the container's name in the pod spec.
	Name string
	// State is the container's state.
	State ContainerState
	// CreatedAt, StartedAt and FinishedAt are the runtime's timestamps; zero
	// when the event has not happened.
	CreatedAt, StartedAt, FinishedAt time.Time
	// ExitCode is the exit code of an exited container.
	ExitCode int
	// Image is the image name in the spec; ImageID the runtime's image ID;
	// ImageRef the resolved reference (digest) when the runtime reports it.
	Image, ImageID, ImageRef string
	// Hash is the container spec hash recorded at creation.
	Hash uint64
	// RestartCount is the restart count recorded at creation.
	RestartCount int
	// Reason and Message explain the state ("Completed", "Error", "OOMKilled").
	Reason, Message string
	// SandboxID is the sandbox the container belongs to.
	SandboxID string
}

// FindContainerStatusByName returns the newest status of the named container,
// or nil.
func (s *PodStatus) FindContainerStatusByName(name string) *ContainerStatus {
	if s == nil {
		return nil
	}
	for _, c := range s.ContainerStatuses {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// GetRunningContainerStatuses returns the statuses of running containers.
func (s *PodStatus) GetRunningContainerStatuses() []*ContainerStatus {
	var out []*ContainerStatus
	for _, c := range s.ContainerStatuses {
		if c.State == ContainerStateRunning {
			out = append(out, c)
		}
	}
	return out
}

// ToPod converts a status to a runtime Pod holding its running sandboxes and
// containers, for KillPod.
func (s *PodStatus) ToPod() *Pod {
	p := &Pod{ID: s.ID, Name: s.Name, Namespace: s.Namespace}
	for _, c := range s.ContainerStatuses {
		p.Containers = append(p.Containers, &Container{
			ID: c.ID, Name: c.Name, Image: c.Image, ImageID: c.ImageID,
			Hash: c.Hash, State: c.State, CreatedAt: c.CreatedAt,
		})
	}
	for _, sb := range s.SandboxStatuses {
		state := ContainerStateExited
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			state = ContainerStateRunning
		}
		p.Sandboxes = append(p.Sandboxes, &Container{
			ID:    ContainerID{Type: s.containerType(), ID: sb.GetId()},
			State: state, CreatedAt: time.Unix(0, sb.GetCreatedAt()),
		})
	}
	return p
}

func (s *PodStatus) containerType() string {
	for _, c := range s.ContainerStatuses {
		if c.ID.Type != "" {
			return c.ID.Type
		}
	}
	return ""
}

// IsEmpty reports whether the pod has no sandbox and no container.
func (p *Pod) IsEmpty() bool {
	return p == nil || (len(p.Containers) == 0 && len(p.Sandboxes) == 0)
}

// IsRunning reports whether any container or sandbox of the pod runs.
func (p *Pod) IsRunning() bool {
	if p == nil {
		return false
	}
	for _, c := range p.Containers {
		if c.State == ContainerStateRunning {
			return true
		}
	}
	for _, s := range p.Sandboxes {
		if s.State == ContainerStateRunning {
			return true
		}
	}
	return false
}

// Errors a runtime returns; check with errors.Is.
var (
	// ErrCrashLoopBackOff means a container is waiting out its restart backoff.
	ErrCrashLoopBackOff = errors.New("CrashLoopBackOff")
	// ErrImagePull means an image could not be pulled.
	ErrImagePull = errors.New("ErrImagePull")
	// ErrImagePullBackOff means an image pull failed recently and is not
	// retried until its backoff ends.
	ErrImagePullBackOff = errors.New("ImagePullBackOff")
	// ErrImageNeverPull means the image is missing and imagePullPolicy is Never.
	ErrImageNeverPull = errors.New("ErrImageNeverPull")
	// ErrCreateContainer means the runtime refused to create a container.
	ErrCreateContainer = errors.New("CreateContainerError")
	// ErrRunContainer means the runtime refused to start a container.
	ErrRunContainer = errors.New("RunContainerError")
	// ErrCreatePodSandbox means the runtime could not create the sandbox.
	ErrCreatePodSandbox = errors.New("CreatePodSandboxError")
	// ErrKillContainer means a container could not be stopped.
	ErrKillContainer = errors.New("KillContainerError")
	// ErrConfig means the pod spec could not be turned into a runtime config.
	ErrConfig = errors.New("CreateContainerConfigError")
)
