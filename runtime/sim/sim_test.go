package sim

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestVersionAndStatusSaySim(t *testing.T) {
	e := newEnv(t, Config{})
	v, err := e.r.Version(e.ctx, "v1")
	if err != nil || v.RuntimeName != "sim" || v.RuntimeVersion != "0.1.0-sim" || v.RuntimeApiVersion != "v1" {
		t.Fatalf("Version = %v, %v", v, err)
	}
	st, err := e.r.Status(e.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for _, c := range st.GetStatus().GetConditions() {
		ready[c.Type] = c.Status
	}
	if !ready[runtimeapi.RuntimeReady] || !ready[runtimeapi.NetworkReady] {
		t.Fatalf("conditions = %v, want both ready", ready)
	}
}

func TestUnneededMethodsAreUnimplementedNamingThemselves(t *testing.T) {
	e := newEnv(t, Config{})
	for name, call := range map[string]func() error{
		"Exec":   func() error { _, err := e.r.Exec(e.ctx, nil); return err },
		"Attach": func() error { _, err := e.r.Attach(e.ctx, nil); return err },
		"PortForward": func() error {
			_, err := e.r.PortForward(e.ctx, nil)
			return err
		},
		"CheckpointContainer":       func() error { return e.r.CheckpointContainer(e.ctx, nil) },
		"ListMetricDescriptors":     func() error { _, err := e.r.ListMetricDescriptors(e.ctx); return err },
		"UpdatePodSandboxResources": func() error { _, err := e.r.UpdatePodSandboxResources(e.ctx, nil); return err },
		"ListPodSandboxMetrics":     func() error { _, err := e.r.ListPodSandboxMetrics(e.ctx); return err },
	} {
		err := call()
		if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "sim runtime does not implement "+name) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestLatencyWaitsOnTheClock(t *testing.T) {
	e := newEnv(t, Config{Latency: map[string]Latency{"RunPodSandbox": {Fixed: 2 * time.Second}}})
	done := async(func() error {
		_, err := e.r.RunPodSandbox(e.ctx, &runtimeapi.PodSandboxConfig{
			Metadata: &runtimeapi.PodSandboxMetadata{Name: "a", Namespace: "default", Uid: "a"}}, "")
		return err
	})
	e.waitWaiters(1)
	e.clk.Step(1999 * time.Millisecond)
	pending(t, done, "RunPodSandbox with 2s latency")
	e.clk.Step(time.Millisecond)
	if err := result(t, done, "RunPodSandbox"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.ListPodSandbox(e.ctx, nil); err != nil || e.clk.Waiters() != 0 {
		t.Fatalf("a call without latency touched the clock: waiters %d, err %v", e.clk.Waiters(), err)
	}
	if got := e.r.Calls(); got != 2 {
		t.Fatalf("Calls = %d, want 2", got)
	}
}

func TestLatencyEndsWithTheContext(t *testing.T) {
	e := newEnv(t, Config{DefaultLatency: Latency{Fixed: time.Hour}})
	ctx, cancel := context.WithTimeout(e.ctx, time.Millisecond)
	defer cancel()
	if _, err := e.r.Version(ctx, "v1"); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
}

func TestJitterStaysInItsBoundsAndFollowsTheSeed(t *testing.T) {
	run := func(seed int64) (ids []string, took []time.Duration) {
		clk := clocktesting.NewFakeClock(epoch)
		r := New(clk, logr.Discard(), Config{Seed: seed, DefaultLatency: Latency{Fixed: time.Second, Jitter: time.Second}})
		for range 5 {
			start := clk.Now()
			done := async(func() error { _, err := r.Version(t.Context(), "v1"); return err })
			for {
				waitFor(t, func() bool { return clk.Waiters() > 0 || len(done) > 0 })
				if len(done) > 0 {
					break
				}
				clk.Step(10 * time.Millisecond)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			took = append(took, clk.Since(start))
			ids = append(ids, r.newID())
		}
		return ids, took
	}
	ids1, took1 := run(7)
	ids2, took2 := run(7)
	ids3, _ := run(8)
	for i, d := range took1 {
		if d < time.Second || d > 2*time.Second+10*time.Millisecond {
			t.Errorf("call %d took %s, want 1s to 2s", i, d)
		}
		if took2[i] != d || ids2[i] != ids1[i] {
			t.Errorf("call %d differs between runs with the same seed", i)
		}
	}
	if ids3[0] == ids1[0] {
		t.Error("a different seed gave the same IDs")
	}
}

// waitFor yields until cond holds, bounded in real time.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		runtime.Gosched()
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"the zero value is valid", Config{}, ""},
		{"a known method is valid", Config{Latency: map[string]Latency{"PullImage": {Fixed: time.Second}}}, ""},
		{"an unknown method is named", Config{Latency: map[string]Latency{"PullImages": {}}}, `"PullImages"`},
		{"a negative latency is rejected", Config{DefaultLatency: Latency{Jitter: -1}}, "negative"},
		{"an empty image name is rejected", Config{Images: []string{""}}, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// tickerOnly hides the fake clock's AfterFunc, so that the timer goroutine
// path of scheduled exits runs.
type tickerOnly struct{ clock.WithTicker }

func TestScriptedExitWithAClockWithoutAfterFunc(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	e := &env{t: t, r: New(tickerOnly{clk}, logr.Discard(), Config{}), clk: clk, ctx: klog.NewContext(t.Context(), logr.Discard())}
	id := e.start(e.sandbox(map[string]string{"sim.nodekit.io/app.exit-after": "3s", "sim.nodekit.io/app.exit-code": "2"}), "app")
	other := e.start(e.namedSandbox("b", 0, map[string]string{"sim.nodekit.io/app.exit-after": "1h"}), "app")
	e.waitWaiters(2)
	clk.Step(3 * time.Second)
	waitFor(t, func() bool { return e.status(id).State == exited })
	if st := e.status(id); st.ExitCode != 2 || st.FinishedAt != epoch.Add(3*time.Second).UnixNano() {
		t.Fatalf("code %d finished %v", st.ExitCode, time.Unix(0, st.FinishedAt).UTC())
	}
	// Stopping the other container ends its timer goroutine (goleak checks).
	if err := e.r.StopContainer(e.ctx, other, 0); err != nil {
		t.Fatal(err)
	}
}
