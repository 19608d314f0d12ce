package podvalidation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateRefusesAPodBeyondACountLimit(t *testing.T) {
	t.Parallel()
	envs := func(n int) []corev1.EnvVar {
		out := make([]corev1.EnvVar, n)
		for i := range out {
			out[i] = corev1.EnvVar{Name: fmt.Sprintf("E%d", i), Value: "x"}
		}
		return out
	}
	for _, c := range []struct {
		name, field string
		edit        func(*corev1.PodSpec)
	}{
		{"300,000 env vars in one container", "spec.containers[0].env",
			func(s *corev1.PodSpec) { s.Containers[0].Env = envs(300000) }},
		{"env vars over the limit only in all containers together", "spec.containers[0].env", func(s *corev1.PodSpec) {
			s.InitContainers[0].Env = envs(maxEnvVars / 2)
			s.InitContainers[1].Env = envs(maxEnvVars / 2)
			s.Containers[0].Env = envs(1)
		}},
		{"too many containers", "spec.containers", func(s *corev1.PodSpec) {
			for i := len(s.InitContainers) + len(s.Containers); i <= maxContainers; i++ {
				c := s.Containers[0]
				c.Name, c.Ports = fmt.Sprintf("c%d", i), nil
				s.Containers = append(s.Containers, c)
			}
		}},
		{"too many volumes", "spec.volumes", func(s *corev1.PodSpec) {
			for i := len(s.Volumes); i <= maxVolumes; i++ {
				s.Volumes = append(s.Volumes, corev1.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
			}
		}},
		{"too many args", "spec.containers[0].args", func(s *corev1.PodSpec) { s.Containers[0].Args = make([]string, maxArgs+1) }},
		{"too many ports", "spec.initContainers[0].ports", func(s *corev1.PodSpec) { s.InitContainers[0].Ports = make([]corev1.ContainerPort, maxPorts+1) }},
		{"too many volume mounts", "spec.containers[0].volumeMounts", func(s *corev1.PodSpec) {
			s.Containers[0].VolumeMounts = make([]corev1.VolumeMount, maxVolumeMounts+1)
		}},
	} {
		p := validPod()
		c.edit(&p.Spec)
		errs := Validate(p)
		if len(errs) != 1 || errs[0].Field != c.field || !strings.Contains(errs[0].Detail, "more than the limit") {
			t.Errorf("%s: Validate gave %d errors, first %v; want one count-limit error at %s", c.name, len(errs), first(errs), c.field)
		}
	}
}

func TestValidateAcceptsAPodAtEveryCountLimit(t *testing.T) {
	t.Parallel()
	p := validPod()
	for i := len(p.Spec.Volumes); i < maxVolumes; i++ {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	main := &p.Spec.Containers[0]
	for i := len(main.Env); i < maxEnvVars; i++ {
		main.Env = append(main.Env, corev1.EnvVar{Name: fmt.Sprintf("E%d", i), Value: "x"})
	}
	main.Args = make([]string, maxArgs)
	if errs := Validate(p); len(errs) > 0 {
		t.Fatalf("Validate gave %v for a pod at the limits", first(errs))
	}
}

func first(errs field.ErrorList) any {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}
