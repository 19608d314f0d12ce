package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const (
	running = runtimeapi.ContainerState_CONTAINER_RUNNING
	exited  = runtimeapi.ContainerState_CONTAINER_EXITED
	created = runtimeapi.ContainerState_CONTAINER_CREATED
)

func TestScriptedExitHappensOnTheClock(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ann        map[string]string
		wantCode   int32
		wantReason string
	}{
		{"an exit with a code is an Error", map[string]string{"sim.nodekit.io/app.exit-after": "5s", "sim.nodekit.io/app.exit-code": "3"}, 3, "Error"},
		{"an exit without a code is Completed", map[string]string{"sim.nodekit.io/app.exit-after": "5s"}, 0, "Completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			id := e.start(e.sandbox(tc.ann), "app")
			e.clk.Step(4900 * time.Millisecond)
			if st := e.status(id); st.State != running {
				t.Fatalf("state after 4.9s = %v, want running", st.State)
			}
			e.clk.Step(100 * time.Millisecond)
			st := e.status(id)
			if st.State != exited || st.ExitCode != tc.wantCode || st.Reason != tc.wantReason {
				t.Fatalf("after 5s: state %v code %d reason %q, want exited %d %q", st.State, st.ExitCode, st.Reason, tc.wantCode, tc.wantReason)
			}
			if got := time.Unix(0, st.FinishedAt).Sub(time.Unix(0, st.StartedAt)); got != 5*time.Second {
				t.Fatalf("ran %s, want 5s", got)
			}
		})
	}
}

func TestCrashOnStartExitsRightAfterStarting(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		wantCode int32
	}{
		{"the default crash code is 1", map[string]string{"sim.nodekit.io/app.crash-on-start": "true"}, 1},
		{"exit-code sets the crash code", map[string]string{"sim.nodekit.io/app.crash-on-start": "true", "sim.nodekit.io/app.exit-code": "42"}, 42},
		{"exit-after 0s exits at once with code 0", map[string]string{"sim.nodekit.io/app.exit-after": "0s"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			st := e.status(e.start(e.sandbox(tc.ann), "app"))
			if st.State != exited || st.ExitCode != tc.wantCode || st.StartedAt == 0 || st.FinishedAt != st.StartedAt {
				t.Fatalf("status = %v code %d started %d finished %d", st.State, st.ExitCode, st.StartedAt, st.FinishedAt)
			}
		})
	}
}

func TestStartDelayBlocksStartContainerUntilTheClockPassesIt(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(e.sandbox(map[string]string{"sim.nodekit.io/app.start-delay": "2s"}), "app")
	done := async(func() error { return e.r.StartContainer(e.ctx, id) })
	e.waitWaiters(1)
	e.clk.Step(time.Second)
	pending(t, done, "StartContainer after 1s of 2s")
	if st := e.status(id); st.State != created {
		t.Fatalf("state while starting = %v, want created", st.State)
	}
	if err := e.r.RemoveContainer(e.ctx, id); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("RemoveContainer while starting: %v, want FailedPrecondition", err)
	}
	e.clk.Step(time.Second)
	if err := result(t, done, "StartContainer"); err != nil {
		t.Fatal(err)
	}
	if st := e.status(id); st.State != running || st.StartedAt != epoch.Add(2*time.Second).UnixNano() {
		t.Fatalf("state %v started %v, want running since epoch+2s", st.State, time.Unix(0, st.StartedAt).UTC())
	}
}

func TestStartDelayEndsWithTheContext(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.create(e.sandbox(map[string]string{"sim.nodekit.io/app.start-delay": "1h"}), "app")
	ctx, cancel := context.WithCancel(e.ctx)
	done := async(func() error { return e.r.StartContainer(ctx, id) })
	e.waitWaiters(1)
	cancel()
	if err := result(t, done, "StartContainer"); status.Code(err) != codes.Canceled {
		t.Fatalf("err = %v, want Canceled", err)
	}
	if st := e.status(id); st.State != created {
		t.Fatalf("state = %v, want still created", st.State)
	}
}

func TestStopContainer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		timeout  int64
		wantCode int32
		wantWait time.Duration
	}{
		{"a process handles TERM at once and exits 0", nil, 10, ExitCodeTerm, 0},
		{"a timeout of 0 kills at once", nil, 0, ExitCodeKilled, 0},
		{"a process that ignores TERM is killed after the timeout", map[string]string{"sim.nodekit.io/app.ignore-term": "true"}, 10, ExitCodeKilled, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			id := e.start(e.sandbox(tc.ann), "app")
			done := async(func() error { return e.r.StopContainer(e.ctx, id, tc.timeout) })
			if tc.wantWait > 0 {
				e.waitWaiters(1)
				e.clk.Step(tc.wantWait - time.Second)
				pending(t, done, "StopContainer before its timeout")
				if st := e.status(id); st.State != running {
					t.Fatalf("state during the grace period = %v, want running", st.State)
				}
				e.clk.Step(time.Second)
			}
			if err := result(t, done, "StopContainer"); err != nil {
				t.Fatal(err)
			}
			st := e.status(id)
			if st.State != exited || st.ExitCode != tc.wantCode || st.FinishedAt != epoch.Add(tc.wantWait).UnixNano() {
				t.Fatalf("state %v code %d finished %v", st.State, st.ExitCode, time.Unix(0, st.FinishedAt).UTC())
			}
		})
	}
}

func TestStopCancelsTheScheduledExit(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.start(e.sandbox(map[string]string{"sim.nodekit.io/app.exit-after": "5s", "sim.nodekit.io/app.exit-code": "9"}), "app")
	if e.clk.Waiters() != 1 {
		t.Fatalf("waiters = %d, want the scheduled exit", e.clk.Waiters())
	}
	e.clk.Step(time.Second)
	if err := e.r.StopContainer(e.ctx, id, 30); err != nil {
		t.Fatal(err)
	}
	if e.clk.Waiters() != 0 {
		t.Fatalf("waiters = %d after stop, want the exit cancelled", e.clk.Waiters())
	}
	e.clk.Step(time.Minute)
	if st := e.status(id); st.ExitCode != ExitCodeTerm || st.FinishedAt != epoch.Add(time.Second).UnixNano() {
		t.Fatalf("code %d finished %v, want the stop's", st.ExitCode, time.Unix(0, st.FinishedAt).UTC())
	}
}

func TestRemoveSemanticsAreContainerd(t *testing.T) {
	e := newEnv(t, Config{})
	sb := e.sandbox(nil)
	id := e.start(sb, "app")
	other := e.start(sb, "side")
	if err := e.r.RemoveContainer(e.ctx, id); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("removing a running container: %v, want FailedPrecondition", err)
	}
	if err := e.r.RemoveContainer(e.ctx, "feedface"); err != nil {
		t.Fatalf("removing an unknown container: %v, want nil", err)
	}
	if err := e.r.StopContainer(e.ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	if err := e.r.RemoveContainer(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.ContainerStatus(e.ctx, id, false); status.Code(err) != codes.NotFound {
		t.Fatalf("status of a removed container: %v, want NotFound", err)
	}
	if err := e.r.RemovePodSandbox(e.ctx, sb); err != nil {
		t.Fatalf("removing a sandbox with a running container: %v", err)
	}
	if _, err := e.r.ContainerStatus(e.ctx, other, false); status.Code(err) != codes.NotFound {
		t.Fatalf("container of a removed sandbox: %v, want NotFound", err)
	}
	if err := e.r.RemovePodSandbox(e.ctx, sb); err != nil {
		t.Fatalf("removing a removed sandbox: %v, want nil", err)
	}
	e.sandbox(nil) // the name is free again
}

func TestStopPodSandboxKillsItsContainers(t *testing.T) {
	e := newEnv(t, Config{})
	sb := e.sandbox(map[string]string{"sim.nodekit.io/app.ignore-term": "true"})
	id := e.start(sb, "app")
	if err := e.r.StopPodSandbox(e.ctx, sb); err != nil {
		t.Fatal(err)
	}
	if st := e.status(id); st.State != exited || st.ExitCode != ExitCodeKilled {
		t.Fatalf("container: %v code %d, want killed", st.State, st.ExitCode)
	}
	resp, err := e.r.PodSandboxStatus(e.ctx, sb, false)
	if err != nil || resp.Status.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Fatalf("sandbox status %v, %v", resp, err)
	}
	if _, err := e.createErr(sb, "late", 0); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("create in a stopped sandbox: %v, want FailedPrecondition", err)
	}
	if err := e.r.StopPodSandbox(e.ctx, "nope"); status.Code(err) != codes.NotFound {
		t.Fatalf("stopping an unknown sandbox: %v, want NotFound", err)
	}
}

func TestNamesAreReserved(t *testing.T) {
	e := newEnv(t, Config{})
	sb := e.sandbox(nil)
	if _, err := e.r.RunPodSandbox(e.ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "uid-web"},
	}, ""); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("second sandbox with the same name: %v, want AlreadyExists", err)
	}
	e.create(sb, "app")
	if _, err := e.createErr(sb, "app", 0); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("second container attempt 0: %v, want AlreadyExists", err)
	}
	if _, err := e.createErr(sb, "app", 1); err != nil {
		t.Fatalf("attempt 1: %v", err)
	}
}

func TestBadScriptAnnotationFailsCreateContainerNamingIt(t *testing.T) {
	for _, tc := range []struct{ name, key, value string }{
		{"a bad duration", "sim.nodekit.io/app.exit-after", "soon"},
		{"a negative duration", "sim.nodekit.io/app.start-delay", "-1s"},
		{"an exit code above 255", "sim.nodekit.io/app.exit-code", "256"},
		{"a bad boolean", "sim.nodekit.io/app.crash-on-start", "yes please"},
		{"a bad exec result", "sim.nodekit.io/app.exec", "x:out"},
		{"exec-after without =", "sim.nodekit.io/app.exec-after", "30s"},
		{"an unknown field", "sim.nodekit.io/app.exit-afer", "5s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			_, err := e.createErr(e.sandbox(map[string]string{tc.key: tc.value}), "app", 0)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("err = %v, want InvalidArgument naming %s", err, tc.key)
			}
		})
	}
	e := newEnv(t, Config{})
	if _, err := e.createErr(e.sandbox(map[string]string{"sim.nodekit.io/other.exit-after": "soon"}), "app", 0); err != nil {
		t.Fatalf("another container's bad annotation failed this one: %v", err)
	}
}

func TestListFilters(t *testing.T) {
	e := newEnv(t, Config{})
	a := e.namedSandbox("a", 0, nil)
	b := e.namedSandbox("b", 0, nil)
	a1 := e.start(a, "one")
	a2 := e.create(a, "two")
	b1 := e.start(b, "one")
	if err := e.r.StopPodSandbox(e.ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		filter *runtimeapi.ContainerFilter
		want   []string
	}{
		{"no filter lists all, oldest first", nil, []string{a1, a2, b1}},
		{"an ID prefix", &runtimeapi.ContainerFilter{Id: a2[:12]}, []string{a2}},
		{"a state", &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: exited}}, []string{b1}},
		{"a sandbox", &runtimeapi.ContainerFilter{PodSandboxId: a}, []string{a1, a2}},
		{"a label selector", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"container": "one"}}, []string{a1, b1}},
		{"all at once", &runtimeapi.ContainerFilter{PodSandboxId: a, State: &runtimeapi.ContainerStateValue{State: created}, LabelSelector: map[string]string{"container": "two"}}, []string{a2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := e.r.ListContainers(e.ctx, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs {
				got = append(got, c.Id)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	sbs, err := e.r.ListPodSandbox(e.ctx, &runtimeapi.PodSandboxFilter{
		State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}, LabelSelector: map[string]string{"app": "a"}})
	if err != nil || len(sbs) != 1 || sbs[0].Id != a {
		t.Fatalf("ready sandboxes of app a: %v, %v", sbs, err)
	}
	if sbs, _ := e.r.ListPodSandbox(e.ctx, &runtimeapi.PodSandboxFilter{Id: b[:8]}); len(sbs) != 1 || sbs[0].Id != b {
		t.Fatalf("sandbox by ID prefix: %v", sbs)
	}
}

func TestSandboxesGetAddressesUnlessOnTheNodeNetwork(t *testing.T) {
	e := newEnv(t, Config{})
	ip := func(id string) string {
		resp, err := e.r.PodSandboxStatus(e.ctx, id, false)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status.GetNetwork().GetIp()
	}
	if a, b := ip(e.namedSandbox("a", 0, nil)), ip(e.namedSandbox("b", 0, nil)); a != "10.88.0.2" || b != "10.88.0.3" {
		t.Fatalf("addresses %s %s, want 10.88.0.2 and 10.88.0.3", a, b)
	}
	id, err := e.r.RunPodSandbox(e.ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "host", Namespace: "default", Uid: "h"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := ip(id); got != "" {
		t.Fatalf("host-network sandbox got address %q", got)
	}
}

func TestExecSyncReturnsTheScriptedResult(t *testing.T) {
	e := newEnv(t, Config{})
	sb := e.sandbox(map[string]string{
		"sim.nodekit.io/probe.exec":       "0:ok",
		"sim.nodekit.io/probe.exec-after": "30s=1:dead",
		"sim.nodekit.io/bad.exec":         "3",
	})
	plain, probe, bad := e.start(sb, "plain"), e.start(sb, "probe"), e.start(sb, "bad")
	exec := func(id string) (string, int) {
		out, _, err := e.r.ExecSync(e.ctx, id, []string{"cat", "/ready"}, time.Second)
		code := 0
		if err != nil {
			ee, ok := err.(interface{ ExitStatus() int })
			if !ok {
				t.Fatalf("ExecSync error %v is not an exit error", err)
			}
			code = ee.ExitStatus()
		}
		return string(out), code
	}
	for _, tc := range []struct {
		name, id, out string
		code          int
	}{
		{"an unscripted container succeeds", plain, "", 0},
		{"the exec annotation gives stdout", probe, "ok", 0},
		{"a non-zero exit is an exit error", bad, "", 3},
	} {
		if out, code := exec(tc.id); out != tc.out || code != tc.code {
			t.Errorf("%s: got %q %d, want %q %d", tc.name, out, code, tc.out, tc.code)
		}
	}
	e.clk.Step(30 * time.Second)
	if out, code := exec(probe); out != "dead" || code != 1 {
		t.Errorf("after 30s: got %q %d, want the exec-after result", out, code)
	}
	if err := e.r.StopContainer(e.ctx, plain, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.r.ExecSync(e.ctx, plain, []string{"true"}, time.Second); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("exec in a stopped container: %v, want FailedPrecondition", err)
	}
}
