package prober

import (
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// LogRecorder is an EventRecorder that writes events to a logger, for
// agents that do not send events to an API server.
type LogRecorder struct {
	// Log receives one line per event.
	Log logr.Logger
}

var _ EventRecorder = LogRecorder{}

// Eventf logs the event at V(0) for warnings and V(2) otherwise, with the
// object's kind, namespace, name and field path.
func (r LogRecorder) Eventf(object runtime.Object, eventType, reason, messageFmt string, args ...any) {
	log := r.Log
	if eventType != corev1.EventTypeWarning {
		log = log.V(2)
	}
	if !log.Enabled() {
		return
	}
	kv := []any{"type", eventType, "reason", reason, "message", fmt.Sprintf(messageFmt, args...)}
	if ref, ok := object.(*corev1.ObjectReference); ok {
		kv = append(kv, "kind", ref.Kind, "namespace", ref.Namespace, "name", ref.Name, "fieldPath", ref.FieldPath)
	} else if pod, ok := object.(*corev1.Pod); ok {
		kv = append(kv, "kind", "Pod", "namespace", pod.Namespace, "name", pod.Name)
	}
	log.Info("event", kv...)
}
