package simharness

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	clocktesting "k8s.io/utils/clock/testing"
)

// failureLog returns a logger that keeps every line up to V(4), stamped with
// the simulated time, and writes them to the test log if the test fails.
func failureLog(t testing.TB, clk *clocktesting.FakeClock) logr.Logger {
	var (
		mu  sync.Mutex
		buf strings.Builder
	)
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("pipeline log (simulated time since start):\n%s", buf.String())
		}
	})
	return funcr.New(func(prefix, args string) {
		at := clk.Since(Epoch)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&buf, "%8s %s %s\n", at, prefix, args)
	}, funcr.Options{Verbosity: 4})
}
