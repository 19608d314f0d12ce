package nodekit

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	testingclock "k8s.io/utils/clock/testing"
)

func TestConnectCRILimitsStartsOnlyWhenAsked(t *testing.T) {
	for limit, want := range map[int]string{0: "*cri.instrumentedRuntime", 4: "*cri.limitedStarts"} {
		cfg := DefaultConfig()
		cfg.Runtime, cfg.MaxParallelStarts = RuntimeSim, limit
		svc, err := connectCRI(cfg, testingclock.NewFakeClock(time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)), prometheus.NewRegistry(), logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%T", svc.rs); got != want {
			t.Errorf("MaxParallelStarts %d: the runtime service is %s, want %s", limit, got, want)
		}
	}
}
