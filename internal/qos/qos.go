package qos

import (
	corev1 "k8s.io/api/core/v1"
)

// PodClass returns the pod's QoS class: status.qosClass when it is set (it
// never changes once the API server set it), else the class computed from
// the spec.
func PodClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return ComputePodClass(pod)
}

// ComputePodClass computes the pod's QoS class from its spec alone.
func ComputePodClass(pod *corev1.Pod) corev1.PodQOSClass {
	if r := pod.Spec.Resources; r != nil && (len(r.Requests) > 0 || len(r.Limits) > 0) {
		return requirementsClass(r)
	}
	var class corev1.PodQOSClass
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := requirementsClass(&list[i].Resources)
			switch {
			case c == corev1.PodQOSBurstable:
				return c
			case class == "":
				class = c
			case class != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if class == "" {
		return corev1.PodQOSBestEffort
	}
	return class
}

// requirementsClass is the class of one set of requests and limits.
func requirementsClass(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	cpu := resourceClass(r, corev1.ResourceCPU)
	mem := resourceClass(r, corev1.ResourceMemory)
	if cpu != mem {
		return corev1.PodQOSBurstable
	}
	return cpu
}

// resourceClass is the class that one resource alone would give.
func resourceClass(r *corev1.ResourceRequirements, name corev1.ResourceName) corev1.PodQOSClass {
	lim, hasLim := r.Limits[name]
	req, hasReq := r.Requests[name]
	if !hasReq && hasLim {
		req = lim // the API server defaults a missing request to the limit
	}
	switch {
	case !req.Equal(lim):
		return corev1.PodQOSBurstable
	case req.IsZero():
		return corev1.PodQOSBestEffort
	}
	return corev1.PodQOSGuaranteed
}
