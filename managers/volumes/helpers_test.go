package volumes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeObjects is an ObjectGetter over maps; it also records RegisterPod
// and UnregisterPod, which the volume manager must never call (the agent's
// registry owns registration).
type fakeObjects struct {
	mu         sync.Mutex
	cms        map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	registered map[types.UID]int
	gets       int
}

func newFakeObjects() *fakeObjects {
	return &fakeObjects{cms: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}, registered: map[types.UID]int{}}
}

func (f *fakeObjects) putConfigMap(ns, name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cms[ns+"/"+name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func (f *fakeObjects) putSecret(ns, name string, data map[string][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.secrets[ns+"/"+name] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func (f *fakeObjects) GetConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if cm, ok := f.cms[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f *fakeObjects) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f *fakeObjects) RegisterPod(pod *corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered[pod.UID]++
}

func (f *fakeObjects) UnregisterPod(pod *corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.registered, pod.UID)
}

// fakeTokens hands out numbered tokens and records the requests.
type fakeTokens struct {
	mu        sync.Mutex
	n         int
	requests  []*authenticationv1.TokenRequest
	accounts  []string
	forgotten []types.UID
	// untilDeadline is, for each request, the time its context had left
	// (-1 without a deadline).
	untilDeadline []time.Duration
}

func (f *fakeTokens) GetServiceAccountToken(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	left := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	f.untilDeadline = append(f.untilDeadline, left)
	f.requests = append(f.requests, tr.DeepCopy())
	f.accounts = append(f.accounts, ns+"/"+name)
	out := tr.DeepCopy()
	out.Status.Token = fmt.Sprintf("token-%d", f.n)
	return out, nil
}

// DeleteServiceAccountToken records the forgotten pod.
func (f *fakeTokens) DeleteServiceAccountToken(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgotten = append(f.forgotten, uid)
}

// renew makes the next token a new one, as the token manager does at 80%.
func (f *fakeTokens) renew() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
}

// recorder keeps events as "Type Reason message".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(_ apiruntime.Object, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// fakeNode is a node with 4 cpus and 8Gi of memory.
type fakeNode struct{}

func (fakeNode) Allocatable() (corev1.ResourceList, error) {
	return corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}, nil
}

type testEnv struct {
	m       *VolumeManager
	objects *fakeObjects
	tokens  *fakeTokens
	rec     *recorder
	clk     *clocktesting.FakeClock
	root    string
	reg     *prometheus.Registry

	mu         sync.Mutex
	tmpfs      map[string]int64 // dir -> size of each tmpfs asked for
	tmpfsCalls int              // calls of the tmpfs mounter
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	e := &testEnv{objects: newFakeObjects(), tokens: &fakeTokens{}, rec: &recorder{},
		clk: clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)), root: t.TempDir(),
		reg: prometheus.NewRegistry()}
	e.m = New(e.objects, e.tokens, fakeNode{}, e.rec, e.clk, e.reg, logr.Discard(), Config{RootDir: e.root})
	e.tmpfs = map[string]int64{}
	e.m.tmpfs = func(dir string, size int64) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.tmpfs[dir] = size
		e.tmpfsCalls++
		return nil
	}
	e.m.tmpfsMounted = func(dir string) bool {
		_, ok := e.tmpfsSize(dir)
		return ok
	}
	return e
}

// tmpfsSize is the size of the (recorded) tmpfs on dir; ok is false when
// none was asked for.
func (e *testEnv) tmpfsSize(dir string) (int64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	size, ok := e.tmpfs[dir]
	return size, ok
}

func newPod(uid string, vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + uid, Namespace: "ns", UID: types.UID(uid),
			Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "default",
			Volumes:            vols,
			Containers:         []corev1.Container{{Name: "main", Image: "busybox"}},
		},
	}
}

// setUp is SetUpPod that fails the test on error.
func (e *testEnv) setUp(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if err := e.m.SetUpPod(context.Background(), pod); err != nil {
		t.Fatalf("SetUpPod: %v", err)
	}
}

// read reads a file of a volume through its symlinks.
func (e *testEnv) read(t *testing.T, pod *corev1.Pod, volume, file string) string {
	t.Helper()
	v, ok := e.m.PodVolumes(pod.UID)[volume]
	if !ok {
		t.Fatalf("volume %s is not set up", volume)
	}
	b, err := os.ReadFile(filepath.Join(v.HostPath, file))
	if err != nil {
		t.Fatalf("read %s/%s: %v", volume, file, err)
	}
	return string(b)
}

// modeOf is the permission bits of a volume's file (through symlinks).
func (e *testEnv) modeOf(t *testing.T, pod *corev1.Pod, volume, file string) os.FileMode {
	t.Helper()
	info, err := os.Stat(filepath.Join(e.m.PodVolumes(pod.UID)[volume].HostPath, file))
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func ptr[T any](v T) *T { return &v }

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
}
