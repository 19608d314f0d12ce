package abtest_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/abtest"
	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/managers/eviction"
	"github.com/nodekit/nodekit/runnable"
)

// refuseAll is an embedder's own admission variant: a handler, after the
// defaults, that refuses every pod.
func refuseAll(abtest.Workload) []fx.Option {
	return []fx.Option{abtest.AdmissionHandler(admission.HandlerFunc(func(*admission.Attributes) admission.Result {
		return admission.Refused("RefuseAll", "this variant refuses every pod")
	}))}
}

func TestRegisterRefusesDuplicatesAndBadNames(t *testing.T) {
	h := abtest.New()
	if err := h.Register("admission", "refuse-all", refuseAll); err != nil {
		t.Fatalf("a new value of a built-in key: %v", err)
	}
	if err := h.Register("ranker", "mine", refuseAll); err != nil {
		t.Fatalf("a new key: %v", err)
	}
	tests := []struct {
		name, key, value string
		swap             abtest.Swap
		wantErr          string
	}{
		{"an embedder's key=value again", "admission", "refuse-all", refuseAll, "already registered"},
		{"a built-in key=value again", "pleg", "evented", refuseAll, "already registered"},
		{"an empty key", "", "x", refuseAll, "non-empty"},
		{"an empty value", "ranker", "", refuseAll, "non-empty"},
		{"a comma in the value", "ranker", "a,b", refuseAll, "without ','"},
		{"an equals sign in the key", "a=b", "c", refuseAll, "without ','"},
		{"no swap", "ranker", "nil", nil, "nil swap"},
	}
	for _, tt := range tests {
		err := h.Register(tt.key, tt.value, tt.swap)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: Register(%q, %q) = %v, want an error with %q", tt.name, tt.key, tt.value, err, tt.wantErr)
		}
	}
	want := []string{"admission=default|deny|refuse-all", "pleg=evented|generic", "ranker=mine", "start=fifo|priority"}
	if got := h.Keys(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Keys() = %q, want %q (the failed registrations left out)", got, want)
	}
}

func TestParseNamesTheRegisteredSwapsOnAnUnknownOne(t *testing.T) {
	h := abtest.New()
	if err := h.Register("ranker", "mine", refuseAll); err != nil {
		t.Fatal(err)
	}
	if v, err := h.Parse("ranker=mine,pleg=evented"); err != nil || v.Values["ranker"] != "mine" || v.Values["pleg"] != "evented" {
		t.Fatalf("Parse(ranker=mine,pleg=evented) = %+v, %v", v, err)
	}
	for _, spec := range []string{"ranker=yours", "colour=red", "ranker"} {
		_, err := h.Parse(spec)
		if err == nil {
			t.Errorf("Parse(%q) accepted it", spec)
			continue
		}
		for _, want := range []string{"ranker=mine", "pleg=evented|generic", "admission=default|deny"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Parse(%q) = %v, does not list %q", spec, err, want)
			}
		}
	}
}

func TestMainRejectsBadFlagsBeforeRunning(t *testing.T) {
	for _, args := range [][]string{
		{"--a", "colour=red"},
		{"--plegs", "generic,fast"},
		{"--pods", "0"},
		{"--runtime", "cri"},
		{"--no-such-flag"},
		{"extra"},
	} {
		h := abtest.New()
		var stdout, stderr bytes.Buffer
		h.Stdout, h.Stderr = &stdout, &stderr
		if code := h.Main(args); code != 2 || stdout.Len() != 0 || stderr.Len() == 0 {
			t.Errorf("Main(%q) = %d, stdout %q, stderr %q; want 2, no report and a message", args, code, stdout.String(), stderr.String())
		}
	}
}

// An embedder's own variant, registered through the public API, runs from
// the command line and its difference shows in the report: every pod
// refused, where the defaults refuse none.
func TestMainRunsAnEmbeddersVariant(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agents for a second each")
	}
	h := abtest.New()
	if err := h.Register("admission", "refuse-all", refuseAll); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	h.Stdout, h.Stderr = &stdout, &stderr
	code := h.Main([]string{"--a", "admission=default", "--b", "admission=refuse-all", "--pods", "3", "--deny-every", "0",
		"--duration", time.Second.String(), "--exit-after", "1m", "--root-dir", t.TempDir()})
	if code != 0 {
		t.Fatalf("Main = %d; stderr:\n%s", code, stderr.String())
	}
	report := stdout.String()
	for _, want := range []string{
		"| admission=default | 3 |",          // three pods started
		"| admission=refuse-all | 0 | n/a |", // none started
		"| pods refused | n/a (0 to 3) |",
		"| pod start p50 | n/a |", // no pod of B started
		"Ratios, admission=refuse-all / admission=default",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	var refused []string
	for _, line := range strings.Split(report, "\n") {
		// The start table's rows: 8 columns.
		if f := strings.Split(line, "|"); len(f) == 10 && strings.HasPrefix(strings.TrimSpace(f[1]), "admission=") {
			refused = append(refused, strings.TrimSpace(f[6]))
		}
	}
	if strings.Join(refused, " ") != "0 3" {
		t.Errorf("refused columns %q, want 0 then 3:\n%s", refused, report)
	}
}

// evictOne is an embedder's eviction policy that ignores the kubelet's
// rule that static pods are critical (the workload's pods are static, so
// the default eviction manager never evicts them): once a pod runs, it
// evicts it through the agent's real eviction path, the
// eviction.PodKiller the eviction manager uses.
func evictOne(abtest.Workload) []fx.Option {
	return []fx.Option{fx.Provide(runnable.As(func(pods eviction.PodLister, killer eviction.PodKiller) runnable.Runnable {
		return runnable.Runnable{Name: "evict one", Run: func(ctx context.Context) error {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-tick.C:
				}
				// A running pod: one evicted while it waits to start can be
				// started afterwards and end Running (seen about one run in
				// three; an agent issue, reported, not this test's subject).
				for _, p := range pods.ActivePods() {
					if p.Status.Phase != corev1.PodRunning {
						continue
					}
					err := killer.KillPod(ctx, p, 0, func(st *corev1.PodStatus) {
						st.Phase, st.Reason, st.Message = corev1.PodFailed, eviction.Reason, "evicted by the evict=one variant"
					})
					if err != nil && ctx.Err() == nil {
						return err
					}
					<-ctx.Done()
					return nil
				}
			}
		}}
	}))}
}

// An embedder's eviction variant shows in the evicted column, where the
// defaults evict nothing.
func TestRunCountsThePodsAVariantEvicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agents for two seconds each")
	}
	h := abtest.New()
	if err := h.Register("evict", "one", evictOne); err != nil {
		t.Fatal(err)
	}
	w := abtest.DefaultWorkload()
	w.Pods, w.Duration, w.ExitAfter, w.DenyEvery, w.RootDir = 3, 2*time.Second, time.Minute, 0, t.TempDir()
	rep, err := h.Run(context.Background(), w, []string{"pleg=generic", "pleg=generic,evict=one"})
	if err != nil {
		t.Fatal(err)
	}
	def, evicting := rep.Results[0], rep.Results[1]
	if def.Evicted != 0 || evicting.Evicted != 1 || evicting.Refused != 0 {
		t.Fatalf("evicted %d and %d (%d refused), want 0 under the defaults and 1 under evict=one:\n%s",
			def.Evicted, evicting.Evicted, evicting.Refused, rep)
	}
	if !strings.Contains(rep.String(), "| pods evicted | n/a (0 to 1) |") {
		t.Errorf("no evicted ratio:\n%s", rep)
	}
}
