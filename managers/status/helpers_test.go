package status

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// epoch is where every fake clock starts, on a whole second.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// waitLimit bounds every wait for another goroutine; tests never sleep.
const waitLimit = 10 * time.Second

func apiPod(name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid},
		Spec:       corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		Status: corev1.PodStatus{
			Phase:      corev1.PodPending,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(epoch.Add(-time.Hour))}},
		},
	}
}

// running is a status the agent could compute for a running pod.
func running() *corev1.PodStatus {
	start := metav1.NewTime(epoch.Add(-time.Minute))
	return &corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: &start,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "c", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
		}},
	}
}

func withPhase(s *corev1.PodStatus, phase corev1.PodPhase) *corev1.PodStatus {
	s.Phase = phase
	return s
}

// fakeResolver is a scripted PodResolver. Without a translation, a UID is
// its own API UID under the pod's name.
type fakeResolver struct {
	mu    sync.Mutex
	pods  map[types.UID]*corev1.Pod
	trans map[types.UID]types.UID // static UID -> mirror UID ("" = none yet)
}

func newResolver(pods ...*corev1.Pod) *fakeResolver {
	r := &fakeResolver{pods: map[types.UID]*corev1.Pod{}, trans: map[types.UID]types.UID{}}
	for _, p := range pods {
		r.set(p)
	}
	return r
}

func (r *fakeResolver) set(p *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods[p.UID] = p.DeepCopy()
}

func (r *fakeResolver) translate(uid, mirror types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trans[uid] = mirror
}

func (r *fakeResolver) GetPodByUID(uid types.UID) (*corev1.Pod, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pods[uid]
	return p, ok
}

func (r *fakeResolver) TranslateUID(uid types.UID) (types.UID, string, string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	target := uid
	if mirror, ok := r.trans[uid]; ok {
		if mirror == "" {
			return "", "", "", false
		}
		target = mirror
	}
	p, ok := r.pods[target]
	if !ok {
		return "", "", "", false
	}
	return target, p.Name, p.Namespace, true
}

// fakeDeletion answers PodResourcesAreReclaimed from a set.
type fakeDeletion struct {
	mu        sync.Mutex
	reclaimed map[types.UID]bool
}

func (d *fakeDeletion) set(uid types.UID, reclaimed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reclaimed == nil {
		d.reclaimed = map[types.UID]bool{}
	}
	d.reclaimed[uid] = reclaimed
}

func (d *fakeDeletion) PodResourcesAreReclaimed(pod *corev1.Pod, _ *corev1.PodStatus) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reclaimed[pod.UID]
}

// fixture is a manager over a fake clientset, driven by calling syncBatch
// directly unless the test runs Run.
type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	clk      *clocktesting.FakeClock
	pods     *fakeResolver
	deletion *fakeDeletion
	m        *StatusManager
}

func newFixture(t *testing.T, pods ...*corev1.Pod) *fixture {
	f := &fixture{t: t, clk: clocktesting.NewFakeClock(epoch), pods: newResolver(pods...), deletion: &fakeDeletion{}}
	objs := make([]apiruntime.Object, 0, len(pods))
	for _, p := range pods {
		objs = append(objs, p)
	}
	f.client = fake.NewClientset(objs...)
	f.m = New(f.client, f.pods, f.deletion, f.clk, logr.Discard(), Config{})
	return f
}

func (f *fixture) sync(all bool) {
	f.m.syncBatch(context.Background(), all)
}

// apiPod returns the pod as the fake API server holds it.
func (f *fixture) apiPod(name string) *corev1.Pod {
	f.t.Helper()
	p, err := f.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("get pod %s: %v", name, err)
	}
	return p
}

// actions returns the verbs (with subresources) the manager sent since the
// last call.
func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.client.Actions() {
		verb := a.GetVerb()
		if a.GetSubresource() != "" {
			verb += "/" + a.GetSubresource()
		}
		out = append(out, verb)
	}
	f.client.ClearActions()
	return out
}

func (f *fixture) patches() []k8stesting.PatchActionImpl {
	var out []k8stesting.PatchActionImpl
	for _, a := range f.client.Actions() {
		if p, ok := a.(k8stesting.PatchActionImpl); ok {
			out = append(out, p)
		}
	}
	return out
}

// until waits for cond, which another goroutine makes true.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}
