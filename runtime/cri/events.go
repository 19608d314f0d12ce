package cri

import (
	corev1 "k8s.io/api/core/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Event reasons the manager records, the kubelet's.
const (
	// EventPulling (Normal): an image pull starts.
	EventPulling = "Pulling"
	// EventPulled (Normal): an image was pulled, or is already present.
	EventPulled = "Pulled"
	// EventFailed (Warning): a container could not be created or started,
	// or its image not pulled ("Error: ErrImagePull").
	EventFailed = "Failed"
	// EventNeverPull (Warning): the image is missing under pull policy Never.
	EventNeverPull = "ErrImageNeverPull"
	// EventBackOff (Warning, on the pod): a container waits out its
	// CrashLoopBackOff.
	EventBackOff = "BackOff"
	// EventCreated (Normal): a container was created.
	EventCreated = "Created"
	// EventStarted (Normal): a container was started.
	EventStarted = "Started"
	// EventKilling (Normal): a container is being stopped.
	EventKilling = "Killing"
	// EventFailedPostStartHook (Warning): a postStart hook failed; the
	// container is killed.
	EventFailedPostStartHook = "FailedPostStartHook"
	// EventFailedPreStopHook (Warning): a preStop hook failed; the container
	// is stopped anyway.
	EventFailedPreStopHook = "FailedPreStopHook"
	// EventFailedCreatePodSandBox (Warning, on the pod): the sandbox could
	// not be created.
	EventFailedCreatePodSandBox = "FailedCreatePodSandBox"
	// EventSandboxChanged (Normal, on the pod): the sandbox is replaced.
	EventSandboxChanged = "SandboxChanged"
)

var _ noderuntime.EventAware = (*Manager)(nil)

// SetEventRecorder implements runtime.EventAware: rec receives the events
// of image pulls, container creation, starts, kills, hooks and backoff.
// Without one (nil), events are written to the manager's log. Safe for
// concurrent use.
func (m *Manager) SetEventRecorder(rec noderuntime.EventRecorder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rec = rec
}

// recorder returns the event recorder, or the log recorder.
func (m *Manager) recorder() noderuntime.EventRecorder {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.rec == nil {
		return noderuntime.LogRecorder{Log: m.log}
	}
	return m.rec
}

// containerEvent records an event about a container of pod; nothing when
// pod is nil (a pod known only to the runtime).
func (m *Manager) containerEvent(pod *corev1.Pod, container, eventType, reason, format string, args ...any) {
	if pod == nil {
		return
	}
	m.recorder().Eventf(noderuntime.ContainerRef(pod, container), eventType, reason, format, args...)
}

// podEvent records an event about pod; nothing when pod is nil.
func (m *Manager) podEvent(pod *corev1.Pod, eventType, reason, format string, args ...any) {
	if pod == nil {
		return
	}
	m.recorder().Eventf(pod, eventType, reason, format, args...)
}
