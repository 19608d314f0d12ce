package env_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit/managers/env"
)

// Without an API server, the Builder still gives the downward API and
// plain values; the node IP is status.hostIP.
func ExampleBuilder_ContainerEnv() {
	b := env.New(env.Deps{}, env.Config{NodeIPs: []string{"192.0.2.10"}})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{
			{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
			{Name: "URL", Value: "http://$(HOST_IP):8080/$(MISSING)"},
		}}}},
	}
	vars, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], []string{"10.1.0.7"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range vars {
		fmt.Printf("%s=%s\n", v.Name, v.Value)
	}
	// Output:
	// HOST_IP=192.0.2.10
	// URL=http://192.0.2.10:8080/$(MISSING)
}

// The variables of a Service, as the kubelet injects them.
func ExampleFromService() {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "redis-main"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.0.0.11", Ports: []corev1.ServicePort{{Port: 6379}}},
	}
	for _, v := range env.FromService(svc) {
		fmt.Printf("%s=%s\n", v.Name, v.Value)
	}
	// Output:
	// REDIS_MAIN_SERVICE_HOST=10.0.0.11
	// REDIS_MAIN_SERVICE_PORT=6379
	// REDIS_MAIN_PORT=tcp://10.0.0.11:6379
	// REDIS_MAIN_PORT_6379_TCP=tcp://10.0.0.11:6379
	// REDIS_MAIN_PORT_6379_TCP_PROTO=tcp
	// REDIS_MAIN_PORT_6379_TCP_PORT=6379
	// REDIS_MAIN_PORT_6379_TCP_ADDR=10.0.0.11
}
