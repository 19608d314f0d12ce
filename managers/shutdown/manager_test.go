package shutdown

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

type scenario struct {
	m       *Default
	clk     *clocktesting.FakeClock
	trigger *fakeTrigger
	calls   chan *kill
	events  *fakeEvents
	cancel  context.CancelFunc
	done    chan error
}

func start(t *testing.T, cfg Config, pods ...*corev1.Pod) *scenario {
	t.Helper()
	s := &scenario{clk: clocktesting.NewFakeClock(time.Unix(1000, 0)), trigger: newFakeTrigger(),
		calls: make(chan *kill, 16), events: &fakeEvents{}, done: make(chan error, 1)}
	m, err := NewDefault(fakePods(pods), &fakeKiller{clk: s.clk, calls: s.calls}, s.trigger, s.events, s.clk, nil, logr.Discard(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.m = m
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-s.done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	return s
}

func (s *scenario) fire(t *testing.T, down bool) {
	t.Helper()
	select {
	case s.trigger.ch <- down:
	case <-time.After(10 * time.Second):
		t.Fatal("the manager does not watch the trigger")
	}
}

func TestShutdownKillsRegularPodsBeforeCriticalOnesWithinTheirShares(t *testing.T) {
	t.Parallel()
	critical := pod("critical", i32(2000001000), i64(30))
	long := pod("long", nil, i64(60))
	short := pod("short", i32(1000), i64(5))
	s := start(t, Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second}, critical, long, short)
	if s.m.ShutdownStatus() != nil {
		t.Fatal("shutting down before the trigger")
	}
	s.fire(t, true)

	// The regular pods first, together, with min(own, 20s).
	regular := map[string]*kill{}
	for range 2 {
		k := next(t, s.calls)
		regular[k.pod.Name] = k
	}
	if regular["long"] == nil || regular["short"] == nil {
		t.Fatalf("first kills = %v, want the two regular pods", regular)
	}
	if regular["long"].grace != 20 || regular["short"].grace != 5 {
		t.Errorf("regular grace periods long %d short %d, want 20 and 5", regular["long"].grace, regular["short"].grace)
	}
	if err := s.m.ShutdownStatus(); !errors.Is(err, ErrShuttingDown) || err.Error() != "node is shutting down" {
		t.Errorf("ShutdownStatus = %v", err)
	}
	select {
	case <-s.m.Changed():
	default:
		t.Error("Changed did not fire")
	}
	if r, msg, ok := s.m.Admit(pod("new", nil, nil)); ok || r != "NodeShutdown" || msg != "Pod was rejected as the node is shutting down." {
		t.Errorf("Admit = %q %q %v", r, msg, ok)
	}

	// The critical pod waits for the regular group's 20s while a regular
	// pod still terminates.
	close(regular["short"].finish)
	waitTimer(t, s.clk)
	none(t, s.calls, "before the regular share ended")
	s.clk.Step(19 * time.Second)
	none(t, s.calls, "after 19s")
	s.clk.Step(time.Second)
	k := next(t, s.calls)
	if k.pod.Name != "critical" || k.grace != 10 || k.at.Sub(time.Unix(1000, 0)) != 20*time.Second {
		t.Errorf("then killed %s with grace %d at +%v, want critical with 10 at +20s", k.pod.Name, k.grace, k.at.Sub(time.Unix(1000, 0)))
	}
	select {
	case <-s.trigger.released:
		t.Fatal("released before the critical pods terminated")
	default:
	}
	close(k.finish)
	select {
	case <-s.trigger.released:
	case <-time.After(10 * time.Second):
		t.Fatal("the trigger was never released")
	}
	ev := s.events.list()
	if len(ev) != 1 || ev[0] != "Normal NodeShutdown Shutdown manager detected shutdown event" {
		t.Errorf("events = %q", ev)
	}
}

func TestShutdownStartsTheCriticalGroupOnceTheRegularPodsTerminated(t *testing.T) {
	t.Parallel()
	s := start(t, Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second},
		pod("regular", nil, nil), pod("critical", i32(2000000000), nil))
	s.fire(t, true)
	k := next(t, s.calls)
	if k.pod.Name != "regular" || k.grace != 20 {
		t.Fatalf("first kill %s grace %d, want regular 20", k.pod.Name, k.grace)
	}
	close(k.finish)
	k = next(t, s.calls)
	if k.pod.Name != "critical" || k.grace != 10 || !k.at.Equal(time.Unix(1000, 0)) {
		t.Errorf("second kill %s grace %d at %v, want critical 10 at once", k.pod.Name, k.grace, k.at)
	}
	close(k.finish)
	<-s.trigger.released
}

func TestShutdownSkipsEmptyGroupsAndGivesCriticalPodsOnlyTheirShare(t *testing.T) {
	t.Parallel()
	s := start(t, Config{GracePeriod: 10 * time.Second, GracePeriodCriticalPods: 4 * time.Second}, pod("critical", i32(2000001000), nil))
	s.fire(t, true)
	k := next(t, s.calls)
	if k.pod.Name != "critical" || k.grace != 4 || !k.at.Equal(time.Unix(1000, 0)) {
		t.Fatalf("kill %s grace %d at %v, want critical 4 at once", k.pod.Name, k.grace, k.at)
	}
	waitTimer(t, s.clk)
	s.clk.Step(4 * time.Second) // the pod never ends: the share bounds the wait
	<-s.trigger.released
}

func TestTerminatedStatusIsTheKubelets(t *testing.T) {
	t.Parallel()
	s := start(t, Config{GracePeriod: 2 * time.Second}, pod("a", nil, nil))
	s.fire(t, true)
	k := next(t, s.calls)
	st := corev1.PodStatus{Phase: corev1.PodRunning}
	k.status(&st)
	if st.Phase != corev1.PodFailed || st.Reason != "Terminated" || st.Message != "Pod was terminated in response to imminent node shutdown." {
		t.Errorf("status phase %s reason %q message %q", st.Phase, st.Reason, st.Message)
	}
	if len(st.Conditions) != 1 {
		t.Fatalf("conditions %+v", st.Conditions)
	}
	c := st.Conditions[0]
	if c.Type != corev1.DisruptionTarget || c.Status != corev1.ConditionTrue || c.Reason != "TerminationByKubelet" ||
		c.Message != Message || c.ObservedGeneration != 3 || c.LastTransitionTime.IsZero() {
		t.Errorf("condition %+v", c)
	}
	done := corev1.PodStatus{Phase: corev1.PodSucceeded}
	k.status(&done)
	if done.Phase != corev1.PodSucceeded {
		t.Errorf("a Succeeded pod became %s", done.Phase)
	}
	close(k.finish)
	<-s.trigger.released
}

func TestCancelledShutdownAdmitsAgain(t *testing.T) {
	t.Parallel()
	s := start(t, Config{GracePeriod: 2 * time.Second})
	s.fire(t, true)
	<-s.trigger.released // no pods: released at once
	if _, _, ok := s.m.Admit(pod("p", nil, nil)); ok {
		t.Error("admitted while shutting down")
	}
	<-s.m.Changed()
	s.fire(t, false)
	<-s.m.Changed()
	if s.m.ShutdownStatus() != nil {
		t.Error("still shutting down after the cancellation")
	}
	if _, _, ok := s.m.Admit(pod("p", nil, nil)); !ok {
		t.Error("refused after the cancellation")
	}
}

func TestUnavailableTriggerKeepsRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := &Logind{SystemdDir: filepath.Join(dir, "systemd"), SystemBusSocket: filepath.Join(dir, "bus")}
	_, err := l.Watch(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "logind not available: graceful node shutdown needs systemd-logind") ||
		!strings.Contains(err.Error(), "did not boot with systemd") {
		t.Fatalf("Watch = %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "systemd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Watch(context.Background()); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no system D-Bus socket at") {
		t.Errorf("Watch without a bus = %v", err)
	}
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	m, err := NewDefault(fakePods(nil), &fakeKiller{clk: clk}, l, &fakeEvents{}, clk, nil, logr.Discard(), Config{GracePeriod: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("Run returned %v while ctx was live", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if m.ShutdownStatus() != nil {
		t.Error("shutting down without a trigger")
	}
}
