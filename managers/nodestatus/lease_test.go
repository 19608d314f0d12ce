package nodestatus

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// nextLease returns the next lease from w that satisfies ok.
func nextLease(t *testing.T, w watch.Interface, ok func(*coordinationv1.Lease) bool) *coordinationv1.Lease {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			if l, isLease := ev.Object.(*coordinationv1.Lease); isLease && ok(l) {
				return l
			}
		case <-timeout:
			t.Fatal("timed out waiting for the lease")
		}
	}
}

func TestLeaseIsCreatedAndRenewed(t *testing.T) {
	t.Parallel()
	// The lease controller's loop runs on real time: renew every 50ms so
	// that stepping the fake clock shows up quickly in renewTime.
	h := newHarness(t, Config{RenewInterval: 50 * time.Millisecond})
	w, err := h.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	h.start()
	h.wait(eventSynced)

	l := nextLease(t, w, func(*coordinationv1.Lease) bool { return true })
	if l.Name != "node-1" || l.Namespace != corev1.NamespaceNodeLease {
		t.Errorf("lease %s/%s, want %s/node-1", l.Namespace, l.Name, corev1.NamespaceNodeLease)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "node-1" {
		t.Errorf("holderIdentity %v, want node-1", l.Spec.HolderIdentity)
	}
	if l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 40 {
		t.Errorf("leaseDurationSeconds %v, want 40", l.Spec.LeaseDurationSeconds)
	}
	wantOwner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: h.node().UID}
	if len(l.OwnerReferences) != 1 || l.OwnerReferences[0] != wantOwner {
		t.Errorf("owner references %v, want %v", l.OwnerReferences, wantOwner)
	}
	if l.Spec.RenewTime == nil || !l.Spec.RenewTime.Time.Equal(t0) {
		t.Errorf("renewTime %v, want %v", l.Spec.RenewTime, t0)
	}

	h.clk.Step(10 * time.Second)
	want := t0.Add(10 * time.Second)
	nextLease(t, w, func(l *coordinationv1.Lease) bool {
		return l.Spec.RenewTime != nil && l.Spec.RenewTime.Time.Equal(want)
	})
}

func TestLeaseWaitsForTheNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: corev1.NamespaceNodeLease}}
	if err := h.r.setLeaseOwner(l); err == nil {
		t.Error("setLeaseOwner before registration returned nil, want an error")
	}
	h.r.setNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "u1"}})
	if err := h.r.setLeaseOwner(l); err != nil || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != "u1" {
		t.Errorf("setLeaseOwner = %v, owners %v; want the node as owner", err, l.OwnerReferences)
	}
	h.r.setNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "u2"}})
	if err := h.r.setLeaseOwner(l); err != nil || l.OwnerReferences[0].UID != "u1" {
		t.Errorf("setLeaseOwner = %v, owners %v; want an existing owner kept", err, l.OwnerReferences)
	}
}
