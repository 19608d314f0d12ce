package podvalidation_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodekit/nodekit/internal/podvalidation"
)

func ExampleValidate() {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node-1", Namespace: "default", UID: "0123"},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyAlways,
			DNSPolicy:                     corev1.DNSClusterFirst,
			TerminationGracePeriodSeconds: ptr.To[int64](-1),
			Containers: []corev1.Container{{Name: "main", Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{ContainerPort: 70000, Protocol: corev1.ProtocolTCP}}}},
		},
	}
	for _, e := range podvalidation.Validate(pod) {
		fmt.Println(e)
	}
	// Output:
	// spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive
	// spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0
}
