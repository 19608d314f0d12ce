package env

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/internal/objectcache"
)

// OfflineObjects keeps on disk the ConfigMaps and Secrets of each
// checkpointed pod, for an agent that starts with the API server away:
// the same store the volume manager keeps its copies in
// (internal/objectcache implements it; keys are objectcache.ConfigMapKey
// and SecretKey). It must be safe for concurrent use.
type OfflineObjects interface {
	// Offline reports whether the agent runs its checkpointed pods
	// without the API server.
	Offline() bool
	// Save keeps a copy of obj for pod under key; a pod that is not in
	// the pod checkpoint gets none.
	Save(pod *corev1.Pod, key string, obj any) error
	// Load reads the copy under key into obj; found is false without one.
	Load(pod *corev1.Pod, key string, obj any) (savedAt time.Time, found bool, err error)
}

// offline is the Builder's OfflineObjects and what it logged.
type offline struct {
	store OfflineObjects
	log   logr.Logger

	mu     sync.Mutex
	logged map[types.UID]map[string]bool
}

// SetOffline makes the Builder keep a copy of each ConfigMap and Secret a
// checkpointed pod's env references in store, and use it while store
// reports Offline and the object cannot be fetched (the API server did not
// answer): a pod whose env comes from them starts after a reboot with the
// API server away. Each use is logged once per pod and object. Call it
// before the first ContainerEnv; nil turns it off.
func (b *Builder) SetOffline(store OfflineObjects, log logr.Logger) {
	if store == nil {
		b.offline.Store(nil)
		return
	}
	b.offline.Store(&offline{store: store, log: log.WithName("env"), logged: map[types.UID]map[string]bool{}})
}

// getConfigMap reads a ConfigMap for the pod's env, keeping or using the
// offline copy.
func (r *resolver) getConfigMap(name string) (*corev1.ConfigMap, error) {
	cm, err := r.b.deps.Objects.GetConfigMap(r.ctx, r.pod.Namespace, name)
	out := &corev1.ConfigMap{}
	if ok, err := r.b.offline.Load().use(r.ctx, r.pod, objectcache.ConfigMapKey(name), cm, err, out); !ok {
		return cm, err
	}
	return out, nil
}

// getSecret is getConfigMap for Secrets.
func (r *resolver) getSecret(name string) (*corev1.Secret, error) {
	s, err := r.b.deps.Objects.GetSecret(r.ctx, r.pod.Namespace, name)
	out := &corev1.Secret{}
	if ok, err := r.b.offline.Load().use(r.ctx, r.pod, objectcache.SecretKey(name), s, err, out); !ok {
		return s, err
	}
	return out, nil
}

// use saves fetched (when fetchErr is nil) or, when the agent is offline
// and the API server did not answer, loads the copy into out; ok reports
// that out stands in. err is fetchErr, or why the copy is unusable.
func (o *offline) use(ctx context.Context, pod *corev1.Pod, key string, fetched any, fetchErr error, out any) (ok bool, err error) {
	if o == nil {
		return false, fetchErr
	}
	if fetchErr == nil {
		if err := o.store.Save(pod, key, fetched); err != nil {
			o.log.Error(err, "Failed to save the offline copy of an env source", "pod", klog.KObj(pod), "object", key)
		}
		return false, nil
	}
	var st apierrors.APIStatus
	if errors.As(fetchErr, &st) || ctx.Err() != nil || !o.store.Offline() {
		return false, fetchErr
	}
	savedAt, found, err := o.store.Load(pod, key, out)
	switch {
	case err != nil:
		return false, fmt.Errorf("the API server is unreachable and the offline copy of an env source of pod %s is unusable: %w", klog.KObj(pod), err)
	case !found:
		return false, fetchErr
	}
	o.mu.Lock()
	first := !o.logged[pod.UID][key]
	if first {
		if o.logged[pod.UID] == nil {
			o.logged[pod.UID] = map[string]bool{}
		}
		o.logged[pod.UID][key] = true
	}
	o.mu.Unlock()
	if first {
		o.log.Info("API server unreachable; the container environment uses the offline copy",
			"pod", klog.KObj(pod), "object", key, "saved", savedAt.UTC().Format(time.RFC3339), "err", fetchErr)
	}
	return true, nil
}
