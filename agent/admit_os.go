package agent

import (
	goruntime "runtime"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/agent/admission"
)

// OSAdmission is the OS part of the kubelet's predicate admission, which
// runs before its pod count and resource checks: a pod whose
// kubernetes.io/os label (the kubelet reads the pod's labels, not its
// nodeSelector) names another OS than the node's, or whose spec.os.name is
// not the node's OS, is refused. The node's OS is the agent's
// runtime.GOOS, as the kubelet takes it.
type OSAdmission struct{}

// Admit implements admission.Handler.
func (OSAdmission) Admit(attrs *admission.Attributes) admission.Result {
	return verdict(admitOS(attrs.Pod))
}

func admitOS(pod *corev1.Pod) (reason, message string, ok bool) {
	if os, set := pod.Labels[corev1.LabelOSStable]; set && os != goruntime.GOOS {
		return "PodOSSelectorNodeLabelDoesNotMatch", "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label", false
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != goruntime.GOOS {
		return "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS", false
	}
	return "", "", true
}
