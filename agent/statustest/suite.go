package statustest

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/agent"
)

// Timeout bounds, in real time, how long one SetPodStatus may take before
// the suite calls it blocked.
var Timeout = 10 * time.Second

// Suite runs Check on stores of newStore (a fresh one per check) and fails
// t with every violation.
func Suite(t *testing.T, newStore func() agent.StatusStore) {
	t.Helper()
	for _, err := range Check(newStore) {
		t.Error(err)
	}
}

// Check returns every violation of the StatusStore contract by the stores
// of newStore. A store whose SetPodStatus blocks fails the first check and
// is not checked further.
func Check(newStore func() agent.StatusStore) []error {
	var errs []error
	for i, c := range checks {
		if err := run(c.run, newStore()); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
			if i == 0 {
				break
			}
		}
	}
	return errs
}

// run runs one check, turning a panic of the store into a violation, and
// gives up after Timeout: the check's goroutine is then left blocked.
func run(check func(agent.StatusStore) error, s agent.StatusStore) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("the store panicked: %v", r)
			}
		}()
		done <- check(s)
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(Timeout):
		return fmt.Errorf("the store's calls did not return within %v", Timeout)
	}
}

var checks = []struct {
	name string
	run  func(agent.StatusStore) error
}{
	{"SetPodStatus does not block", checkNonBlocking}, // first: a blocking store fails nothing else
	{"a pod never seen has no status", checkUnknown},
	{"the last status set is read back", checkLastWins},
	{"pods are kept apart by UID", checkByUID},
	{"a status once returned does not change", checkImmutable},
	{"RemovePodStatus forgets the pod and is idempotent", checkRemove},
	{"concurrent use ends with each pod's last status", checkConcurrent},
}

// Pod returns a test pod; a UID of its own, one container "app".
func Pod(name, uid string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "statustest", UID: types.UID(uid)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1"}, {Name: "side", Image: "busybox:1"}}},
	}
}

// epoch is the start time of the test statuses (whole seconds, as the API
// server keeps them).
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Status returns a non-terminal status numbered n: Pending (n even) or
// Running (n odd), its own message and restart count, a start time, a
// Ready condition and two container statuses.
func Status(n int) *corev1.PodStatus {
	start := metav1.NewTime(epoch)
	phase, ready := corev1.PodPending, corev1.ConditionFalse
	if n%2 == 1 {
		phase, ready = corev1.PodRunning, corev1.ConditionTrue
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(epoch.Add(time.Duration(n) * time.Second))}}
	return &corev1.PodStatus{
		Phase:     phase,
		Message:   fmt.Sprintf("status %d", n),
		HostIP:    "10.0.0.1",
		PodIP:     fmt.Sprintf("10.1.0.%d", n%250+1),
		PodIPs:    []corev1.PodIP{{IP: fmt.Sprintf("10.1.0.%d", n%250+1)}},
		StartTime: &start,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.NewTime(epoch)},
		},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "side", Image: "busybox:1", State: running, RestartCount: int32(n)},
			{Name: "app", Image: "busybox:1", State: running, RestartCount: int32(n), Ready: n%2 == 1},
		},
	}
}

// same reports how got differs from want in what a store must keep.
func same(got, want *corev1.PodStatus) error {
	if got == nil {
		return fmt.Errorf("no status, want %q", want.Message)
	}
	if got.Phase != want.Phase || got.Reason != want.Reason || got.Message != want.Message {
		return fmt.Errorf("status %s %q %q, want %s %q %q", got.Phase, got.Reason, got.Message, want.Phase, want.Reason, want.Message)
	}
	if got.PodIP != want.PodIP || got.HostIP != want.HostIP || len(got.PodIPs) != len(want.PodIPs) {
		return fmt.Errorf("IPs %s %v host %s, want %s %v host %s", got.PodIP, got.PodIPs, got.HostIP, want.PodIP, want.PodIPs, want.HostIP)
	}
	conds := func(s *corev1.PodStatus) map[corev1.PodConditionType]corev1.ConditionStatus {
		m := map[corev1.PodConditionType]corev1.ConditionStatus{}
		for _, c := range s.Conditions {
			m[c.Type] = c.Status
		}
		return m
	}
	if g, w := conds(got), conds(want); fmt.Sprint(g) != fmt.Sprint(w) {
		return fmt.Errorf("conditions %v, want %v", g, w)
	}
	ctrs := func(s *corev1.PodStatus) []string {
		var out []string
		for _, c := range s.ContainerStatuses {
			out = append(out, fmt.Sprintf("%s ready=%v restarts=%d running=%v", c.Name, c.Ready, c.RestartCount, c.State.Running != nil))
		}
		sort.Strings(out)
		return out
	}
	if g, w := ctrs(got), ctrs(want); fmt.Sprint(g) != fmt.Sprint(w) {
		return fmt.Errorf("containers %v, want %v", g, w)
	}
	return nil
}

func checkUnknown(s agent.StatusStore) error {
	if st, ok := s.GetPodStatus("never-seen"); ok || st != nil {
		return fmt.Errorf("GetPodStatus of a pod never set found a status (%v, %q); want nil, false", ok, message(st))
	}
	return nil
}

func checkLastWins(s agent.StatusStore) error {
	p := Pod("a", "uid-a")
	for n := range 4 {
		s.SetPodStatus(p, Status(n))
		got, ok := s.GetPodStatus(p.UID)
		if !ok {
			return fmt.Errorf("after SetPodStatus #%d GetPodStatus found nothing", n)
		}
		if err := same(got, Status(n)); err != nil {
			return fmt.Errorf("after SetPodStatus #%d: %w", n, err)
		}
	}
	return nil
}

func checkByUID(s agent.StatusStore) error {
	old, recreated, other := Pod("a", "uid-old"), Pod("a", "uid-new"), Pod("b", "uid-b")
	s.SetPodStatus(old, Status(1))
	s.SetPodStatus(other, Status(3))
	s.SetPodStatus(recreated, Status(2))
	for _, c := range []struct {
		p *corev1.Pod
		n int
	}{{old, 1}, {other, 3}, {recreated, 2}} {
		got, ok := s.GetPodStatus(c.p.UID)
		if !ok {
			return fmt.Errorf("pod %s (UID %s) has no status", c.p.Name, c.p.UID)
		}
		if err := same(got, Status(c.n)); err != nil {
			return fmt.Errorf("pod %s (UID %s): %w", c.p.Name, c.p.UID, err)
		}
	}
	s.RemovePodStatus(old.UID)
	if got, ok := s.GetPodStatus(recreated.UID); !ok || same(got, Status(2)) != nil {
		return fmt.Errorf("removing a pod's predecessor of the same name removed or changed its status (%v, %q)", ok, message(got))
	}
	return nil
}

func checkImmutable(s agent.StatusStore) error {
	p := Pod("a", "uid-a")
	s.SetPodStatus(p, Status(1))
	first, ok := s.GetPodStatus(p.UID)
	if !ok {
		return fmt.Errorf("no status after SetPodStatus")
	}
	s.SetPodStatus(p, Status(2))
	if err := same(first, Status(1)); err != nil {
		return fmt.Errorf("a later SetPodStatus changed a status returned before (readers hold it without a lock): %w", err)
	}
	return nil
}

func checkRemove(s agent.StatusStore) error {
	p := Pod("a", "uid-a")
	s.RemovePodStatus(p.UID) // never set: a no-op
	s.SetPodStatus(p, Status(1))
	s.RemovePodStatus(p.UID)
	if st, ok := s.GetPodStatus(p.UID); ok || st != nil {
		return fmt.Errorf("after RemovePodStatus GetPodStatus found a status (%v, %q); want nil, false", ok, message(st))
	}
	s.RemovePodStatus(p.UID)
	s.SetPodStatus(p, Status(3))
	got, ok := s.GetPodStatus(p.UID)
	if !ok {
		return fmt.Errorf("a pod set again after RemovePodStatus has no status")
	}
	return same(got, Status(3))
}

func checkNonBlocking(s agent.StatusStore) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := range 500 {
			p := Pod(fmt.Sprintf("p%d", n%50), fmt.Sprintf("uid-%d", n%50))
			s.SetPodStatus(p, Status(n))
		}
	}()
	select {
	case <-done:
		return nil
	case <-time.After(Timeout):
		return fmt.Errorf("500 SetPodStatus calls did not return within %v with nothing draining the store: it blocks", Timeout)
	}
}

func checkConcurrent(s agent.StatusStore) error {
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := Pod(fmt.Sprintf("w%d", w), fmt.Sprintf("uid-w%d", w))
			gone := Pod(fmt.Sprintf("g%d", w), fmt.Sprintf("uid-g%d", w))
			for n := range rounds {
				s.SetPodStatus(p, Status(n))
				s.SetPodStatus(gone, Status(n))
				_, _ = s.GetPodStatus(p.UID)
				s.RemovePodStatus(gone.UID)
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		got, ok := s.GetPodStatus(types.UID(fmt.Sprintf("uid-w%d", w)))
		if !ok {
			return fmt.Errorf("pod w%d has no status after concurrent use", w)
		}
		if err := same(got, Status(rounds-1)); err != nil {
			return fmt.Errorf("pod w%d after concurrent use: %w", w, err)
		}
		if _, ok := s.GetPodStatus(types.UID(fmt.Sprintf("uid-g%d", w))); ok {
			return fmt.Errorf("pod g%d, removed last, still has a status after concurrent use", w)
		}
	}
	return nil
}

// message returns a status's message, for violations.
func message(s *corev1.PodStatus) string {
	if s == nil {
		return "<nil>"
	}
	return s.Message
}
