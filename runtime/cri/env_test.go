package cri

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/managers/nodeip"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// fakeEnv is an EnvSource that returns fixed variables or an error, and
// records the pod IPs it was asked with.
type fakeEnv struct {
	vars   []corev1.EnvVar
	err    error
	podIPs []string
}

func (f *fakeEnv) ContainerEnv(_ context.Context, _ *corev1.Pod, _ *corev1.Container, podIPs []string) ([]corev1.EnvVar, error) {
	f.podIPs = podIPs
	return f.vars, f.err
}

func TestSyncPodTakesTheEnvironmentFromItsEnvSource(t *testing.T) {
	e := newTestEnv(t)
	src := &fakeEnv{vars: []corev1.EnvVar{{Name: "FROM_API", Value: "cm-value"}, {Name: "B", Value: "2"}}}
	e.m.SetEnvSource(src)
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Args = []string{"$(FROM_API)"}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	cfg := e.rs.lastContainerConfig(t)
	var got []string
	for _, kv := range cfg.Envs {
		got = append(got, kv.Key+"="+string(kv.Value))
	}
	if want := []string{"FROM_API=cm-value", "B=2"}; !slices.Equal(got, want) {
		t.Errorf("env = %v, want %v", got, want)
	}
	if !slices.Equal(cfg.Args, []string{"cm-value"}) {
		t.Errorf("args = %q: not expanded with the source's variables", cfg.Args)
	}
	if len(src.podIPs) == 0 {
		t.Error("the source was not given the pod's IPs")
	}
}

func TestEnvSourceErrorIsCreateContainerConfigErrorWithItsMessage(t *testing.T) {
	e := newTestEnv(t)
	e.m.SetEnvSource(&fakeEnv{err: errors.New("couldn't find key missing in ConfigMap default/cm")})
	r := e.sync(t, newPod("u1", "a"))
	step, ok := failedSteps(r)["StartContainer/a"]
	if !ok || !errors.Is(step.Err, noderuntime.ErrConfig) {
		t.Fatalf("steps = %+v, want a StartContainer ErrConfig", r.Steps)
	}
	reason, msg := r.Waiting("a")
	if reason != "CreateContainerConfigError" || msg != "couldn't find key missing in ConfigMap default/cm" {
		t.Errorf("Waiting = %q, %q; want CreateContainerConfigError with the source's message", reason, msg)
	}
}

func TestTheDefaultEnvironmentReadsTheNodeIPSource(t *testing.T) {
	e := newTestEnv(t)
	e.m.SetNodeIPs(nodeip.Static{"10.0.0.5"})
	pod := newPod("u1", "a")
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}}}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	var got []string
	for _, kv := range e.rs.lastContainerConfig(t).Envs {
		got = append(got, kv.Key+"="+string(kv.Value))
	}
	if !slices.Contains(got, "HOST_IP=10.0.0.5") {
		t.Errorf("env = %v, want HOST_IP=10.0.0.5 from the node IP source", got)
	}
}
