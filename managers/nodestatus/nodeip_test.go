package nodestatus

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/managers/nodeip"
)

// switchableIPs is a nodeip.Source the test changes.
type switchableIPs struct {
	mu  sync.Mutex
	ips []string
}

func (s *switchableIPs) NodeIPs() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ips) == 0 {
		return nil, fmt.Errorf("%w: no default route", nodeip.ErrUnknown)
	}
	return append([]string(nil), s.ips...), nil
}

func (s *switchableIPs) set(ips ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ips = ips
}

func TestNodeAddressesComeFromTheNodeIPSource(t *testing.T) {
	// Config.NodeIP and Machine.HostIP (192.0.2.10) are ignored once a
	// source is set: the Node shows what the pods report as hostIP.
	h := newHarness(t, Config{NodeIP: "192.0.2.99"})
	src := &switchableIPs{}
	h.r.SetNodeIPs(src)
	h.start()
	h.wait(eventSynced)
	if got := h.node().Status.Addresses; len(got) != 1 || got[0].Type != corev1.NodeHostName {
		t.Fatalf("addresses while the node IP is unknown = %v, want only the host name", got)
	}

	src.set("10.0.0.5", "2001:db8::5")
	h.tick()
	want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"},
		{Type: corev1.NodeInternalIP, Address: "2001:db8::5"}, {Type: corev1.NodeHostName, Address: "node-1"}}
	if got := h.node().Status.Addresses; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("addresses = %v, want %v", got, want)
	}
}

func TestAnUnknownNodeIPKeepsTheNodesAddresses(t *testing.T) {
	t.Parallel()
	node := &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}}}}
	setAddressesFrom(node, Config{NodeName: "n"}.withDefaults(), nil, nodeip.ErrUnknown)
	if got := node.Status.Addresses; len(got) != 1 || got[0].Address != "10.0.0.5" {
		t.Fatalf("addresses = %v, want the old ones kept", got)
	}
}
