package runtimetest

import (
	"fmt"
	"os"
	"testing"

	testingclock "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Suite runs every case on backend b, one after the other, each as a
// subtest with a runtime of its own.
func Suite(t *testing.T, b Backend) {
	t.Helper()
	for _, c := range cases() {
		t.Run(b.Name+"/"+c.name, func(t *testing.T) {
			err, skipped := runCase(t, b, c)
			if skipped != "" {
				t.Skip(skipped)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Check runs every case on backend b and returns the violations, one at
// most per case, each naming its case. tb provides temporary directories
// and cleanups; it is failed only by errors of the cleanup.
func Check(tb testing.TB, b Backend) []error {
	var errs []error
	for _, c := range cases() {
		if err, _ := runCase(tb, b, c); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
		}
	}
	return errs
}

// CheckCase runs the named case only; see Check.
func CheckCase(tb testing.TB, b Backend, name string) error {
	for _, c := range cases() {
		if c.name == name {
			err, _ := runCase(tb, b, c)
			return err
		}
	}
	return fmt.Errorf("runtimetest: no case %q", name)
}

// Cases returns the names of the suite's cases, in the order they run.
func Cases() []string {
	var out []string
	for _, c := range cases() {
		out = append(out, c.name)
	}
	return out
}

// testCase is one property checked on a fresh runtime.
type testCase struct {
	name string
	// needs, when set, tells whether the runtime has what the case needs,
	// and otherwise why the case is skipped.
	needs func(rt noderuntime.Runtime) string
	run   func(h *harness)
}

// runCase runs one case on a runtime of its own and removes its pods.
func runCase(tb testing.TB, b Backend, c testCase) (err error, skipped string) {
	rt, clk := b.Open(tb)
	h := &harness{tb: tb, rt: rt, clk: clk, image: b.Image, id: fmt.Sprintf("rtt-%d-%d", os.Getpid(), instanceSeq.Add(1))}
	h.fake, _ = clk.(*testingclock.FakeClock)
	if h.image == "" {
		h.image = "runtimetest/busybox:1"
	}
	if c.needs != nil {
		if why := c.needs(rt); why != "" {
			return nil, why
		}
	}
	defer h.removeAll()
	defer func() {
		if r := recover(); r != nil {
			v, ok := r.(violation)
			if !ok {
				panic(r)
			}
			err = v.err
		}
	}()
	c.run(h)
	return nil, ""
}

func cases() []testCase {
	return []testCase{
		{name: "the runtime names itself, is ready and has an empty status for an unknown pod", run: caseIdentity},
		{name: "a synced pod runs, is listed, and a second sync starts nothing", run: caseRun},
		{name: "exit codes are reported and a Never pod is not restarted", run: caseExitCodes},
		{name: "an exited container of an Always pod is restarted in the same sandbox", run: caseRestart},
		{name: "a changed container spec replaces the container", run: caseSpecChange},
		{name: "a killed pod stops, is listed only with all, and a second kill is fine", run: caseKill},
		{name: "garbage collection removes a removed pod and only it", run: caseGC, needs: func(rt noderuntime.Runtime) string {
			if _, ok := rt.(noderuntime.GarbageCollector); !ok {
				return "the runtime is not a runtime.GarbageCollector"
			}
			return ""
		}},
	}
}
