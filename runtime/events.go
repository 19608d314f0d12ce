package runtime

import (
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
)

// EventRecorder records events about pods and their containers (Pulled,
// Created, Started, Killing, BackOff, Unhealthy...). Its one method has the
// signature of client-go's record.EventRecorder.Eventf, so such a recorder
// can be used as is. The runtime and the prober pass a *corev1.Pod or a
// *corev1.ObjectReference to a container (ContainerRef), as the kubelet
// does. Implementations must be safe for concurrent use and must not block.
type EventRecorder interface {
	// Eventf records an event of type eventType (corev1.EventTypeNormal or
	// corev1.EventTypeWarning) about object.
	Eventf(object apiruntime.Object, eventType, reason, messageFmt string, args ...any)
}

// EventAware is an optional capability of a Runtime that records events
// about what it does (image pulls, container starts and kills, backoff).
// The composition root finds it by type assertion and gives it the agent's
// recorder. The setter is safe to call at any time; nil restores the
// default, which writes events to the runtime's log.
type EventAware interface {
	// SetEventRecorder sets where events go.
	SetEventRecorder(EventRecorder)
}

// LogRecorder is an EventRecorder that writes each event to a logger: the
// default of agents without an API server.
type LogRecorder struct {
	// Log receives one line per event.
	Log logr.Logger
}

var _ EventRecorder = LogRecorder{}

// Eventf logs the event at V(0) for warnings and V(2) otherwise, with the
// object's kind, namespace, name and field path.
func (r LogRecorder) Eventf(object apiruntime.Object, eventType, reason, messageFmt string, args ...any) {
	log := r.Log
	if eventType != corev1.EventTypeWarning {
		log = log.V(2)
	}
	if !log.Enabled() {
		return
	}
	kv := []any{"type", eventType, "reason", reason, "message", fmt.Sprintf(messageFmt, args...)}
	switch o := object.(type) {
	case *corev1.ObjectReference:
		kv = append(kv, "kind", o.Kind, "namespace", o.Namespace, "name", o.Name, "fieldPath", o.FieldPath)
	case *corev1.Pod:
		kv = append(kv, "kind", "Pod", "namespace", o.Namespace, "name", o.Name)
	}
	log.Info("event", kv...)
}

// ContainerRef returns the reference the kubelet's events give a container
// of pod: the pod, with the field path of the container
// ("spec.containers{name}", "spec.initContainers{name}" or
// "spec.ephemeralContainers{name}"). A name the spec does not have gets the
// path of a regular container. pod is not modified.
func ContainerRef(pod *corev1.Pod, name string) *corev1.ObjectReference {
	field := "spec.containers{" + name + "}"
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			field = "spec.initContainers{" + name + "}"
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			field = "spec.ephemeralContainers{" + name + "}"
		}
	}
	return &corev1.ObjectReference{
		Kind: "Pod", APIVersion: "v1", Name: pod.Name, Namespace: pod.Namespace,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion, FieldPath: field,
	}
}
