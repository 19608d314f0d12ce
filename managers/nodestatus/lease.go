package nodestatus

import (
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/apimachinery/lease"
)

// newLeaseController returns the upstream lease controller for the node's
// Lease: named after the node, in kube-node-lease, held by the node, owned
// by the Node object. Its renewTime comes from the Reporter's clock; its
// renew loop runs on real time (wait.JitterUntil, jitter 0.04).
func (r *Reporter) newLeaseController() lease.Controller {
	return lease.NewController(r.clk, r.client, r.cfg.NodeName, int32(r.cfg.LeaseDuration/time.Second),
		nil, r.cfg.RenewInterval, r.cfg.NodeName, corev1.NamespaceNodeLease, r.setLeaseOwner)
}

// setLeaseOwner makes the Node the Lease's owner, so that deleting the Node
// deletes its Lease, as the kubelet's setNodeOwnerFunc does. Until the node
// is registered it fails, which only delays the Lease's creation.
func (r *Reporter) setLeaseOwner(l *coordinationv1.Lease) error {
	if len(l.OwnerReferences) > 0 {
		return nil
	}
	r.mu.Lock()
	node := r.node
	r.mu.Unlock()
	if node == nil || node.UID == "" {
		return fmt.Errorf("set owner of lease %s/%s: node %s is not registered yet", l.Namespace, l.Name, r.cfg.NodeName)
	}
	l.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: corev1.SchemeGroupVersion.String(),
		Kind:       "Node",
		Name:       node.Name,
		UID:        node.UID,
	}}
	return nil
}
