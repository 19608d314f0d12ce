package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func req(requests, limits corev1.ResourceList) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: requests, Limits: limits}
}

func TestPodClass(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		init, ctr []corev1.ResourceRequirements
		podLevel  *corev1.ResourceRequirements
		status    corev1.PodQOSClass
		want      corev1.PodQOSClass
	}{
		{"no requests or limits is BestEffort", nil, []corev1.ResourceRequirements{{}}, nil, "", corev1.PodQOSBestEffort},
		{"only other resources is BestEffort", nil, []corev1.ResourceRequirements{req(list("ephemeral-storage", "1Gi"), nil)}, nil, "", corev1.PodQOSBestEffort},
		{"equal cpu and memory requests and limits is Guaranteed", nil, []corev1.ResourceRequirements{req(list("cpu", "1", "memory", "1Gi"), list("cpu", "1", "memory", "1Gi"))}, nil, "", corev1.PodQOSGuaranteed},
		{"limits alone count as requests", nil, []corev1.ResourceRequirements{req(nil, list("cpu", "1", "memory", "1Gi"))}, nil, "", corev1.PodQOSGuaranteed},
		{"1000m equals 1", nil, []corev1.ResourceRequirements{req(list("cpu", "1000m", "memory", "1Gi"), list("cpu", "1", "memory", "1024Mi"))}, nil, "", corev1.PodQOSGuaranteed},
		{"a cpu limit only is Burstable", nil, []corev1.ResourceRequirements{req(nil, list("cpu", "1"))}, nil, "", corev1.PodQOSBurstable},
		{"a request below the limit is Burstable", nil, []corev1.ResourceRequirements{req(list("cpu", "1", "memory", "1Gi"), list("cpu", "2", "memory", "1Gi"))}, nil, "", corev1.PodQOSBurstable},
		{"a Guaranteed and a BestEffort container make Burstable", nil, []corev1.ResourceRequirements{req(list("cpu", "1", "memory", "1Gi"), list("cpu", "1", "memory", "1Gi")), {}}, nil, "", corev1.PodQOSBurstable},
		{"an init container counts", []corev1.ResourceRequirements{req(list("cpu", "1"), nil)}, []corev1.ResourceRequirements{{}}, nil, "", corev1.PodQOSBurstable},
		{"pod-level resources decide alone", nil, []corev1.ResourceRequirements{{}}, &corev1.ResourceRequirements{Limits: list("cpu", "1", "memory", "1Gi")}, "", corev1.PodQOSGuaranteed},
		{"the status wins once set", nil, []corev1.ResourceRequirements{{}}, nil, corev1.PodQOSGuaranteed, corev1.PodQOSGuaranteed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{QOSClass: c.status}}
			pod.Spec.Resources = c.podLevel
			for _, r := range c.init {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Resources: r})
			}
			for _, r := range c.ctr {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Resources: r})
			}
			if got := PodClass(pod); got != c.want {
				t.Errorf("PodClass = %s, want %s", got, c.want)
			}
		})
	}
}
