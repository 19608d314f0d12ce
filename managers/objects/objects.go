package objects

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Manager gives the node's pods the ConfigMaps and Secrets they reference.
// The default, [WatchManager], keeps each referenced object up to date with
// its own watch, as the kubelet's default change detection does.
// Implementations must be safe for concurrent use.
type Manager interface {
	// GetConfigMap returns the named ConfigMap. The object is shared: the
	// caller must not mutate it. A missing object gives an error for which
	// apierrors.IsNotFound is true. It may block briefly (see
	// Config.SyncWait) while the object's watch starts.
	GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	// GetSecret is GetConfigMap for Secrets.
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// RegisterPod records the ConfigMaps and Secrets pod references (its
	// volumes, projected sources, env, envFrom and imagePullSecrets, in all
	// its containers) and starts watching those not watched yet. Calling
	// it again for the same pod replaces the pod's references. It does not
	// block and keeps no reference to pod.
	RegisterPod(pod *corev1.Pod)
	// UnregisterPod drops pod's references; an object no registered pod
	// references any more is no longer watched. Idempotent.
	UnregisterPod(pod *corev1.Pod)
}

// TokenManager issues service account tokens through the TokenRequest API
// and caches them until they need a refresh. The default is [Tokens].
// Implementations must be safe for concurrent use.
type TokenManager interface {
	// GetServiceAccountToken returns a token for service account name of
	// namespace with tr's spec (audiences, expirationSeconds, bound
	// object). A cached token is returned until it needs a refresh; when a
	// refresh fails, a cached token that has not expired is returned. The
	// result is shared: the caller must not mutate it. It blocks on the
	// API call when it makes one.
	GetServiceAccountToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
	// DeleteServiceAccountToken drops the cached tokens bound to the pod
	// with uid podUID. Idempotent.
	DeleteServiceAccountToken(podUID types.UID)
}

// ServiceLister reads the cluster's Services for the service environment
// of containers. The default is [Services]. Implementations must be safe
// for concurrent use.
type ServiceLister interface {
	// ListServices returns the Services of namespace. They are shared: the
	// caller must not mutate them.
	ListServices(namespace string) ([]*corev1.Service, error)
	// HasSynced reports whether the Services have been listed at least
	// once; before that a container's service environment cannot be built.
	HasSynced() bool
}
