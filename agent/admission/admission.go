package admission

import (
	corev1 "k8s.io/api/core/v1"
)

// Attributes are what a Handler decides on.
type Attributes struct {
	// Pod is the pod asking to run.
	Pod *corev1.Pod
	// OtherPods are the node's active pods other than Pod: those handed to
	// a pod worker that have not finished, and those admitted that wait to
	// start, with the statuses the agent last recorded where it has them.
	OtherPods []*corev1.Pod
}

// Result is a Handler's verdict.
type Result struct {
	// Admit is true when the pod may run.
	Admit bool
	// Reason is a brief CamelCase reason for a refusal (OutOfcpu,
	// SysctlForbidden); it becomes the pod's status.reason.
	Reason string
	// Message is a human-readable explanation of a refusal.
	Message string
}

// Admitted is the Result that lets a pod run.
func Admitted() Result { return Result{Admit: true} }

// Refused is the Result that refuses a pod with reason and message.
func Refused(reason, message string) Result {
	return Result{Reason: reason, Message: message}
}

// Handler decides whether a pod may run on the node.
type Handler interface {
	// Admit returns the verdict on attrs.Pod. It is called from the agent's
	// sync loop: it must return quickly, and must neither mutate nor
	// retain attrs.
	Admit(attrs *Attributes) Result
}

// HandlerFunc is a function used as a Handler.
type HandlerFunc func(attrs *Attributes) Result

// Admit calls f.
func (f HandlerFunc) Admit(attrs *Attributes) Result { return f(attrs) }

// Chain runs handlers in order; the first refusal is the chain's verdict.
// An empty Chain admits every pod.
type Chain []Handler

var _ Handler = Chain(nil)

// Admit returns the first refusal of a handler in c, or Admitted.
func (c Chain) Admit(attrs *Attributes) Result {
	for _, h := range c {
		if r := h.Admit(attrs); !r.Admit {
			return r
		}
	}
	return Admitted()
}
