package volumes

import (
	"context"
	"errors"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Manager owns every volume of the pods on the node: it sets them up before
// the pod's containers start, keeps the API-backed ones (configMap, secret,
// downwardAPI, projected) up to date, and tears them down when the pod is
// gone. The runtime reads the result through runtime.VolumeGetter.
// Implementations must be safe for concurrent use.
type Manager interface {
	noderuntime.VolumeGetter

	// SetUpPod makes every volume of pod ready on the host, and refreshes
	// the API-backed ones that are already. It blocks for file and API
	// I/O. A volume that cannot be set up yet (a missing configMap) makes
	// it return an error wrapping ErrNotReady naming the volume and the
	// cause; it is retried, with backoff, by the next call. A volume that
	// was set up before and fails to refresh keeps its content and is not
	// an error. pod is not modified and may be kept until the next call.
	SetUpPod(ctx context.Context, pod *corev1.Pod) error
	// TearDownPod removes every volume of the pod (unmounting what is
	// mounted) and forgets it. The caller guarantees no container of the
	// pod runs. It is idempotent.
	TearDownPod(ctx context.Context, pod *corev1.Pod) error
	// CleanupPods tears down the volumes of every pod set up here for which
	// removed returns true (the pod is gone and nothing of it runs).
	CleanupPods(ctx context.Context, removed func(types.UID) bool) error
	// Run refreshes the API-backed volumes of every set-up pod each resync
	// period, so that edits of the objects reach the files between pod
	// syncs. It blocks until ctx ends and returns nil.
	Run(ctx context.Context) error
}

// ErrNotReady means a volume cannot be set up yet; the pod waits and the
// set-up is retried.
var ErrNotReady = errors.New("volume not ready")

// ObjectGetter reads the ConfigMaps and Secrets pods reference; managers/
// objects implements it with watch-based caches of the objects registered
// pods reference (the agent's Registry registers the pods it holds; the
// volume manager never does). A missing object is an error for which
// apierrors.IsNotFound is true. It must be safe for concurrent use; the
// returned objects must not be modified.
type ObjectGetter interface {
	// GetConfigMap returns the ConfigMap namespace/name.
	GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	// GetSecret returns the Secret namespace/name.
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// TokenGetter returns service-account tokens for pods: managers/objects'
// token manager caches each and requests a new one before it expires (at
// 80% of its lifetime, or after 24h), as the kubelet's does.
type TokenGetter interface {
	// GetServiceAccountToken returns a token for the service account
	// namespace/name as the TokenRequest asks (audiences, expiration and
	// the pod it is bound to).
	GetServiceAccountToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// TokenForgetter is an optional capability of a TokenGetter: it drops the
// cached tokens bound to a pod, which the manager asks for when it tears
// the pod's volumes down.
type TokenForgetter interface {
	// DeleteServiceAccountToken forgets the tokens bound to the pod.
	DeleteServiceAccountToken(podUID types.UID)
}

// NodeResources gives the node's allocatable resources, the default of
// downward API resource limits a container does not set.
type NodeResources interface {
	// Allocatable returns the node's allocatable cpu, memory and
	// ephemeral-storage.
	Allocatable() (corev1.ResourceList, error)
}

// EventRecorder records the FailedMount events; runtime.EventRecorder and
// client-go's record.EventRecorder fit.
type EventRecorder = noderuntime.EventRecorder
