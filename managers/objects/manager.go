package objects

import (
	"context"
	"errors"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// WatchManager is the default Manager: the kubelet's watch-based manager.
// Each ConfigMap and Secret that a registered pod references gets its own
// reflector (a list and watch restricted to that object by a metadata.name
// field selector), started by Run and stopped when no registered pod
// references the object any more. An object found immutable is no longer
// watched. Safe for concurrent use.
type WatchManager struct {
	client kubernetes.Interface
	clk    clock.Clock
	log    logr.Logger
	cfg    Config

	configMaps *kindCache
	secrets    *kindCache

	mu      sync.Mutex
	pods    map[podKey]podRefs
	running bool
	kick    chan struct{}

	// backoff overrides the reflectors' retry backoff; tests shorten it.
	backoff *wait.Backoff
}

var _ Manager = (*WatchManager)(nil)

type podKey struct {
	namespace, name string
	uid             types.UID
}

type podRefs struct {
	configMaps, secrets map[string]struct{}
}

// NewWatchManager returns a WatchManager reading objects through client.
// It does no I/O and starts nothing: Run starts the watches.
func NewWatchManager(client kubernetes.Interface, clk clock.Clock, log logr.Logger, cfg Config) *WatchManager {
	return &WatchManager{
		client:     client,
		clk:        clk,
		log:        log.WithName("objects"),
		cfg:        cfg.withDefaults(),
		configMaps: newKindCache(configMapKind(client)),
		secrets:    newKindCache(secretKind(client)),
		pods:       map[podKey]podRefs{},
		kick:       make(chan struct{}, 1),
	}
}

// Run starts the watches of the referenced objects, and of those that pods
// registered later reference, until ctx ends; then it stops them, waits for
// them and returns nil. Before Run, and after it, Gets read from the API
// server. Run may be called once; it returns an error at once for an
// invalid Config or a second call.
func (m *WatchManager) Run(ctx context.Context) error {
	if err := m.cfg.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return errors.New("objects: Run called twice")
	}
	m.running = true
	m.mu.Unlock()

	var wg sync.WaitGroup
	defer wg.Wait()
	defer m.secrets.stopAll()
	defer m.configMaps.stopAll()
	rlog := m.log.WithName("reflector")
	for {
		m.configMaps.startPending(ctx, &wg, m.client, m.clk, rlog, m.backoff)
		m.secrets.startPending(ctx, &wg, m.client, m.clk, rlog, m.backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-m.kick:
		}
	}
}

// GetConfigMap implements Manager.
func (m *WatchManager) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	obj, err := m.configMaps.lookup(ctx, m.clk, m.cfg.SyncWait, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMap), nil
}

// GetSecret implements Manager.
func (m *WatchManager) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := m.secrets.lookup(ctx, m.clk, m.cfg.SyncWait, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}

// RegisterPod implements Manager.
func (m *WatchManager) RegisterPod(pod *corev1.Pod) {
	next := podRefs{configMaps: configMapNames(pod), secrets: secretNames(pod)}
	key := podKey{pod.Namespace, pod.Name, pod.UID}
	m.mu.Lock()
	prev := m.pods[key]
	m.pods[key] = next
	// Add before removing, so that an object both registrations reference
	// keeps its watch.
	for n := range next.configMaps {
		m.configMaps.add(pod.Namespace, n)
	}
	for n := range next.secrets {
		m.secrets.add(pod.Namespace, n)
	}
	m.dropLocked(pod.Namespace, prev)
	m.mu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// UnregisterPod implements Manager.
func (m *WatchManager) UnregisterPod(pod *corev1.Pod) {
	key := podKey{pod.Namespace, pod.Name, pod.UID}
	m.mu.Lock()
	defer m.mu.Unlock()
	prev, ok := m.pods[key]
	if !ok {
		return
	}
	delete(m.pods, key)
	m.dropLocked(pod.Namespace, prev)
}

func (m *WatchManager) dropLocked(namespace string, refs podRefs) {
	for n := range refs.configMaps {
		m.configMaps.remove(namespace, n)
	}
	for n := range refs.secrets {
		m.secrets.remove(namespace, n)
	}
}

func configMapKind(client kubernetes.Interface) kind {
	return kind{
		resource: corev1.Resource("configmaps"),
		example:  &corev1.ConfigMap{},
		typeName: "*v1.ConfigMap",
		list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().ConfigMaps(ns).List(ctx, opts)
		},
		watch: func(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
		},
		get: func(ctx context.Context, ns, name string) (runtime.Object, error) {
			return client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		},
		immutable: func(obj runtime.Object) bool {
			cm, ok := obj.(*corev1.ConfigMap)
			return ok && cm.Immutable != nil && *cm.Immutable
		},
	}
}

func secretKind(client kubernetes.Interface) kind {
	return kind{
		resource: corev1.Resource("secrets"),
		example:  &corev1.Secret{},
		typeName: "*v1.Secret",
		list: func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Secrets(ns).List(ctx, opts)
		},
		watch: func(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Secrets(ns).Watch(ctx, opts)
		},
		get: func(ctx context.Context, ns, name string) (runtime.Object, error) {
			return client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		},
		immutable: func(obj runtime.Object) bool {
			s, ok := obj.(*corev1.Secret)
			return ok && s.Immutable != nil && *s.Immutable
		},
	}
}
