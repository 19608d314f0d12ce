package status

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/nodekit/nodekit/internal/podannotations"
)

// APIMirrorClient is the default MirrorClient, over a Kubernetes client. A
// mirror pod is a copy of its static pod, annotated with the static pod's
// config hash (kubernetes.io/config.mirror) and owned by this Node, so that
// the garbage collector removes it if the Node object goes away.
type APIMirrorClient struct {
	client   kubernetes.Interface
	nodeName string
	log      logr.Logger
}

var _ MirrorClient = (*APIMirrorClient)(nil)

// NewMirrorClient returns a MirrorClient that writes through client on
// behalf of the node cfg.NodeName. It does no I/O.
func NewMirrorClient(client kubernetes.Interface, log logr.Logger, cfg Config) *APIMirrorClient {
	return &APIMirrorClient{client: client, nodeName: cfg.NodeName, log: log.WithName("mirror")}
}

// CreateMirrorPod implements MirrorClient. It reads the Node to learn its
// UID for the owner reference. It returns an error if staticPod has no
// config hash, if the node name is not configured, or if a mirror pod with
// another hash already holds the name (delete it first).
func (c *APIMirrorClient) CreateMirrorPod(ctx context.Context, staticPod *corev1.Pod) error {
	hash, ok := staticPod.Annotations[podannotations.Hash]
	if !ok || hash == "" {
		return fmt.Errorf("create mirror pod %s: static pod has no %s annotation", klog.KObj(staticPod), podannotations.Hash)
	}
	if c.nodeName == "" {
		return fmt.Errorf("create mirror pod %s: node name not configured", klog.KObj(staticPod))
	}
	node, err := c.client.CoreV1().Nodes().Get(ctx, c.nodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("create mirror pod %s: get node %s: %w", klog.KObj(staticPod), c.nodeName, err)
	}
	mirror := mirrorOf(staticPod, hash, node)
	pods := c.client.CoreV1().Pods(mirror.Namespace)
	_, err = pods.Create(ctx, mirror, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		existing, getErr := pods.Get(ctx, mirror.Name, metav1.GetOptions{})
		if getErr == nil && existing.Annotations[podannotations.Mirror] == hash {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("create mirror pod %s: %w", klog.KObj(staticPod), err)
	}
	c.log.V(2).Info("Created mirror pod", "pod", klog.KObj(mirror), "staticPodUID", staticPod.UID)
	return nil
}

// mirrorOf returns the mirror pod of staticPod: a copy without the fields
// the API server sets, annotated with hash and owned by node.
func mirrorOf(staticPod *corev1.Pod, hash string, node *corev1.Node) *corev1.Pod {
	mirror := staticPod.DeepCopy()
	mirror.ObjectMeta = metav1.ObjectMeta{
		Name:        staticPod.Name,
		Namespace:   staticPod.Namespace,
		Labels:      maps.Clone(staticPod.Labels),
		Annotations: map[string]string{},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1",
			Kind:       "Node",
			Name:       node.Name,
			UID:        node.UID,
			Controller: ptr.To(true),
		}},
	}
	maps.Copy(mirror.Annotations, staticPod.Annotations)
	mirror.Annotations[podannotations.Mirror] = hash
	mirror.Status = corev1.PodStatus{}
	return mirror
}

// DeleteMirrorPod implements MirrorClient. It returns an error if
// podFullName is not "name_namespace" or the API server fails.
func (c *APIMirrorClient) DeleteMirrorPod(ctx context.Context, podFullName string, uid *types.UID) (bool, error) {
	name, namespace, ok := strings.Cut(podFullName, "_")
	if !ok || name == "" || namespace == "" || strings.Contains(namespace, "_") {
		return false, fmt.Errorf("delete mirror pod %q: want a full name name_namespace", podFullName)
	}
	opts := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	if uid != nil {
		opts.Preconditions = &metav1.Preconditions{UID: uid}
	}
	err := c.client.CoreV1().Pods(namespace).Delete(ctx, name, opts)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone already, or replaced by a pod with another UID.
		c.log.V(4).Info("Mirror pod not deleted", "pod", klog.KRef(namespace, name), "reason", err.Error())
		return false, nil
	case err != nil:
		return false, fmt.Errorf("delete mirror pod %s/%s: %w", namespace, name, err)
	}
	c.log.V(2).Info("Deleted mirror pod", "pod", klog.KRef(namespace, name))
	return true, nil
}
