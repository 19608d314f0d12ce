package agent

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/nodeip"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

type unknownIPs struct{}

func (unknownIPs) NodeIPs() ([]string, error) {
	return nil, fmt.Errorf("%w: no default route", nodeip.ErrUnknown)
}

func TestPodAddressesComeFromTheNodeIPSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                 string
		src                  nodeip.Source
		hostNetwork          bool
		wantHostIP, wantPod  string
		wantHostIPs, wantPIs int
	}{
		{name: "a pod gets the detected address as hostIP", src: nodeip.Static{"10.0.0.5"},
			wantHostIP: "10.0.0.5", wantPod: "10.88.0.7", wantHostIPs: 1, wantPIs: 1},
		{name: "a hostNetwork pod gets the node's addresses as podIPs", src: nodeip.Static{"10.0.0.5", "2001:db8::5"},
			hostNetwork: true, wantHostIP: "10.0.0.5", wantPod: "10.0.0.5", wantHostIPs: 2, wantPIs: 2},
		{name: "an unknown node address leaves hostIP empty", src: unknownIPs{},
			wantPod: "10.88.0.7", wantPIs: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := testPod(corev1.RestartPolicyAlways, "a")
			pod.Spec.HostNetwork = tc.hostNetwork
			rt := &scriptedRuntime{result: &noderuntime.SyncResult{}}
			st := NewMemoryStatuses()
			// Config.NodeIP is ignored once a source is given.
			s := NewSyncer(rt, st, nil, testingclock.NewFakeClock(t0), testr.New(t),
				Config{NodeName: "n", NodeIP: "192.0.2.1"}, WithNodeIPs(tc.src))
			status := &noderuntime.PodStatus{ID: pod.UID, SandboxStatuses: readySandbox(), IPs: []string{"10.88.0.7"},
				ContainerStatuses: []*noderuntime.ContainerStatus{running("a", 0)}}
			if _, err := s.SyncPod(t.Context(), podworkers.SyncPodCreate, pod, nil, status); err != nil {
				t.Fatal(err)
			}
			got, _ := st.GetPodStatus(pod.UID)
			if got.HostIP != tc.wantHostIP || len(got.HostIPs) != tc.wantHostIPs || got.PodIP != tc.wantPod || len(got.PodIPs) != tc.wantPIs {
				t.Fatalf("hostIP %q hostIPs %v podIP %q podIPs %v; want %q (%d) and %q (%d)",
					got.HostIP, got.HostIPs, got.PodIP, got.PodIPs, tc.wantHostIP, tc.wantHostIPs, tc.wantPod, tc.wantPIs)
			}
		})
	}
}
