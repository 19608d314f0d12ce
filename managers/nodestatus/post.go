package nodestatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The default labels every node carries. The beta labels are deprecated
// but the kubelet still sets them.
const (
	labelOS         = "kubernetes.io/os"
	labelArch       = "kubernetes.io/arch"
	labelLegacyOS   = "beta.kubernetes.io/os"
	labelLegacyArch = "beta.kubernetes.io/arch"
)

// errNodeGone is returned when the Node object was deleted under us.
var errNodeGone = errors.New("node object is gone")

// labels returns the labels the node must carry: the defaults, then
// Config.Labels.
func (r *Reporter) labels() map[string]string {
	l := map[string]string{
		corev1.LabelHostname: r.cfg.Hostname,
		labelOS:              goruntime.GOOS,
		labelArch:            goruntime.GOARCH,
		labelLegacyOS:        goruntime.GOOS,
		labelLegacyArch:      goruntime.GOARCH,
	}
	for k, v := range r.cfg.Labels {
		l[k] = v
	}
	return l
}

// register creates the Node with Config.Taints, or, when it exists (the
// agent restarted), adds the labels it lacks and leaves its taints alone. Either way the next status sync posts the
// status.
func (r *Reporter) register(ctx context.Context) error {
	name := r.cfg.NodeName
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: r.labels()}}
	// Taints go on the Node only when it is created, as the kubelet's
	// registerWithTaints: a restart never re-adds a taint someone removed.
	for _, t := range r.cfg.Taints {
		node.Spec.Taints = append(node.Spec.Taints, *t.DeepCopy())
	}
	setNodeStatus(node, r.cfg, r.gather(ctx))
	created, err := r.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	switch {
	case err == nil:
		r.log.Info("registered node", "node", name)
		r.setNode(created)
	case apierrors.IsAlreadyExists(err):
		if err := r.reconcileLabels(ctx); err != nil {
			return err
		}
		r.log.Info("node was already registered", "node", name)
	default:
		return fmt.Errorf("create node %s: %w", name, err)
	}
	r.registered = true
	r.lastReport = time.Time{}
	return nil
}

// reconcileLabels adds to the existing Node the labels it lacks or has with
// another value. It never removes a label.
func (r *Reporter) reconcileLabels(ctx context.Context) error {
	name := r.cfg.NodeName
	existing, err := r.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get existing node %s: %w", name, err)
	}
	changed := map[string]string{}
	for k, v := range r.labels() {
		if cur, ok := existing.Labels[k]; !ok || cur != v {
			changed[k] = v
		}
	}
	if len(changed) == 0 {
		r.setNode(existing)
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": changed}})
	if err != nil {
		return fmt.Errorf("encode labels of node %s: %w", name, err)
	}
	patched, err := r.client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patch labels of node %s: %w", name, err)
	}
	r.setNode(patched)
	return nil
}

// updateStatus posts the status, trying nodeStatusUpdateRetry times.
func (r *Reporter) updateStatus(ctx context.Context, in inputs) error {
	var err error
	for try := range nodeStatusUpdateRetry {
		err = r.tryUpdateStatus(ctx, try, in)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, errNodeGone):
			r.registered = false
			return err
		}
		r.log.V(2).Info("node status update failed; retrying", "node", r.cfg.NodeName, "attempt", try+1, "err", err.Error())
	}
	return fmt.Errorf("update status of node %s: %d attempts failed, last: %w", r.cfg.NodeName, nodeStatusUpdateRetry, err)
}

// tryUpdateStatus reads the Node (the first try from the API server's
// cache), computes its status and patches it when it changed or a report
// is due.
func (r *Reporter) tryUpdateStatus(ctx context.Context, try int, in inputs) error {
	name := r.cfg.NodeName
	opts := metav1.GetOptions{}
	if try == 0 {
		opts.ResourceVersion = "0"
	}
	node, err := r.client.CoreV1().Nodes().Get(ctx, name, opts)
	if apierrors.IsNotFound(err) && try > 0 { // the cache may not have a new Node yet
		return fmt.Errorf("get node %s: %w: %w", name, errNodeGone, err)
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", name, err)
	}
	updated := node.DeepCopy()
	setNodeStatus(updated, r.cfg, in)
	now := r.clk.Now()
	if now.Before(r.lastReport.Add(r.cfg.StatusReportFrequency)) && !statusChanged(&node.Status, &updated.Status) {
		r.log.V(6).Info("node status unchanged", "node", name)
		return nil
	}
	patch, err := statusPatch(node, updated)
	if err != nil {
		return fmt.Errorf("compute status patch of node %s: %w", name, err)
	}
	posted, err := r.client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patch status of node %s: %w", name, err)
	}
	r.lastReport = now
	r.logReadyChange(node, posted)
	r.setNode(posted)
	r.log.V(4).Info("posted node status", "node", name)
	return nil
}

func (r *Reporter) logReadyChange(old, cur *corev1.Node) {
	was, is := readyOf(old), readyOf(cur)
	if is == nil || (was != nil && was.Status == is.Status) {
		return
	}
	r.log.Info("node readiness changed", "node", r.cfg.NodeName, "ready", is.Status, "reason", is.Reason, "message", is.Message)
}

func readyOf(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// statusPatch is the strategic merge patch from old to cur. Conditions
// merge by type, so conditions that others set are kept. Addresses are
// declared to merge by type too, which would fold two InternalIPs (a
// dual-stack node) into one and keep stale ones, so, as the kubelet does,
// changed addresses replace the list whole.
func statusPatch(old, cur *corev1.Node) ([]byte, error) {
	o, err := json.Marshal(old)
	if err != nil {
		return nil, err
	}
	c, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(o, c, corev1.Node{})
	if err != nil || len(old.Status.Addresses) == 0 || apiequality.Semantic.DeepEqual(old.Status.Addresses, cur.Status.Addresses) {
		return patch, err
	}
	return replaceAddresses(patch, cur.Status.Addresses)
}

// replaceAddresses sets status.addresses of a strategic merge patch to
// addrs followed by the "$patch": "replace" directive, without an element
// order for them.
func replaceAddresses(patch []byte, addrs []corev1.NodeAddress) ([]byte, error) {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	status, _ := p["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		p["status"] = status
	}
	list := make([]any, 0, len(addrs)+1)
	for _, a := range addrs {
		list = append(list, a)
	}
	status["addresses"] = append(list, map[string]any{"$patch": "replace"})
	delete(status, "$setElementOrder/addresses") // it would contradict the replace

	return json.Marshal(p)
}
