package env

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/managers/nodeip"
)

// failingIPs is a nodeip.Source that knows no address.
type failingIPs struct{}

func (failingIPs) NodeIPs() ([]string, error) {
	return nil, fmt.Errorf("%w: default route: no default routes found", nodeip.ErrUnknown)
}

func TestNodeIPsComeFromTheSource(t *testing.T) {
	t.Parallel()
	// The source wins over Config.NodeIPs: every reader of the node's
	// addresses asks the same source.
	b := New(Deps{NodeIPs: nodeip.Static{"10.0.0.5"}}, Config{NodeIPs: []string{"192.0.2.1"}})
	for _, hostNet := range []bool{false, true} {
		pod := testPod()
		pod.Spec.HostNetwork = hostNet
		pod.Spec.Containers[0].Env = []corev1.EnvVar{
			{Name: "HIP", ValueFrom: field("status.hostIP")}, {Name: "HIPS", ValueFrom: field("status.hostIPs")},
			{Name: "PIP", ValueFrom: field("status.podIP")},
		}
		got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], []string{"10.88.0.7"})
		if err != nil {
			t.Fatal(err)
		}
		wantPod := "10.88.0.7"
		if hostNet {
			wantPod = "10.0.0.5"
		}
		if m := asMap(got); m["HIP"] != "10.0.0.5" || m["HIPS"] != "10.0.0.5" || m["PIP"] != wantPod {
			t.Errorf("hostNetwork=%v: env = %v, want hostIP(s) 10.0.0.5 and podIP %s", hostNet, m, wantPod)
		}
	}
}

func TestAnUnknownNodeIPFailsOnlyHostIPReferences(t *testing.T) {
	t.Parallel()
	b := New(Deps{NodeIPs: failingIPs{}}, Config{})
	pod := testPod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "b"}}
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err != nil {
		t.Fatalf("a container without a hostIP reference: %v", err)
	}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "HIP", ValueFrom: field("status.hostIP")}}
	_, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if !errors.Is(err, nodeip.ErrUnknown) || !strings.Contains(err.Error(), "no default routes") {
		t.Fatalf("err = %v, want the source's reason", err)
	}
}
