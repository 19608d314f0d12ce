package cri

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RuntimeClassGetter reads RuntimeClasses (node.k8s.io/v1), which map a
// pod's runtimeClassName to the CRI runtime handler that runs it. nodekit
// provides one backed by its Kubernetes client when a kubeconfig is set
// (the Node authorizer lets a node read every RuntimeClass).
// Implementations must be safe for concurrent use.
type RuntimeClassGetter interface {
	// GetRuntimeClass returns the named RuntimeClass, or an error for which
	// apierrors.IsNotFound holds when there is none. The caller must not
	// modify it.
	GetRuntimeClass(ctx context.Context, name string) (*nodev1.RuntimeClass, error)
}

// runtimeClasses holds the manager's RuntimeClassGetter.
type runtimeClasses struct {
	mu     sync.RWMutex
	getter RuntimeClassGetter
}

// SetRuntimeClassGetter makes the manager resolve the runtimeClassName of
// the pods it starts through g. Without one (nil), a pod that names a
// RuntimeClass cannot start: its sandbox fails with an error saying so.
// Safe for concurrent use.
func (m *Manager) SetRuntimeClassGetter(g RuntimeClassGetter) {
	m.classes.mu.Lock()
	defer m.classes.mu.Unlock()
	m.classes.getter = g
}

// runtimeHandler is the CRI handler that runs pod, as the kubelet's
// RuntimeClass manager resolves it: the configured RuntimeHandler for a pod
// without runtimeClassName, else the handler of its RuntimeClass. A
// RuntimeClass that does not exist is an error (its NotFound error, as the
// kubelet passes it on).
func (m *Manager) runtimeHandler(ctx context.Context, pod *corev1.Pod) (string, error) {
	name := pod.Spec.RuntimeClassName
	if name == nil || *name == "" {
		return m.cfg.RuntimeHandler, nil
	}
	m.classes.mu.RLock()
	g := m.classes.getter
	m.classes.mu.RUnlock()
	if g == nil {
		return "", fmt.Errorf("cannot resolve RuntimeClass %q: nodekit has no API server to read RuntimeClasses from", *name)
	}
	rc, err := g.GetRuntimeClass(ctx, *name)
	if err != nil {
		return "", err
	}
	return rc.Handler, nil
}

// checkUserNamespaces refuses a pod with hostUsers: false. The kubelet
// gives such a pod a user namespace with an ID mapping it allocates, when
// the pod's runtime handler supports user namespaces; nodekit does not
// allocate ID mappings yet, so it refuses the pod either way, with the
// kubelet's words when the handler lacks support.
func (m *Manager) checkUserNamespaces(ctx context.Context, pod *corev1.Pod, handler string) error {
	if pod.Spec.HostUsers == nil || *pod.Spec.HostUsers {
		return nil
	}
	supported, err := m.handlerSupportsUserNamespaces(ctx, handler)
	if err != nil {
		return fmt.Errorf("spec.hostUsers is false: %w", err)
	}
	if !supported {
		return fmt.Errorf("spec.hostUsers is false: RuntimeClass handler %q does not support user namespaces", handler)
	}
	return errors.New("spec.hostUsers is false: user namespaces are not supported by nodekit yet")
}

// handlerSupportsUserNamespaces asks the runtime whether handler supports
// user namespaces (its RuntimeStatus handler features); a handler the
// runtime does not report is an error, as in the kubelet.
func (m *Manager) handlerSupportsUserNamespaces(ctx context.Context, handler string) (bool, error) {
	resp, err := m.rs.Status(ctx, false)
	if err != nil {
		return false, fmt.Errorf("runtime status: %w", err)
	}
	handlers := resp.GetRuntimeHandlers()
	if handlers == nil {
		return false, errors.New("runtime handlers are not set")
	}
	return supportsUserNamespaces(handlers, handler)
}

func supportsUserNamespaces(handlers []*runtimeapi.RuntimeHandler, handler string) (bool, error) {
	for _, h := range handlers {
		if h.GetName() == handler {
			return h.GetFeatures().GetUserNamespaces(), nil
		}
	}
	return false, fmt.Errorf("the handler %q is not known", handler)
}

// sandboxHandler is the runtime handler of the pod's new sandbox, checked
// against the pod's hostUsers.
func (m *Manager) sandboxHandler(ctx context.Context, pod *corev1.Pod) (string, error) {
	handler, err := m.runtimeHandler(ctx, pod)
	if err != nil {
		return "", err
	}
	if err := m.checkUserNamespaces(ctx, pod, handler); err != nil {
		return "", err
	}
	if handler != "" {
		m.log.V(2).Info("running pod with runtime handler", "pod", formatPod(pod), "runtimeHandler", handler)
	}
	return handler, nil
}
