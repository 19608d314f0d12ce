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
		reg := prometheus.NewRegistry()
		svc, err := connectCRI(cfg, testingclock.NewFakeClock(time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)), reg, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%T", svc.rs); got != want {
			t.Errorf("MaxParallelStarts %d: the runtime service is %s, want %s", limit, got, want)
		}
		_ = svc.rs.StartContainer(t.Context(), "no-such-container") // its error does not matter: only its wait
		if got, want := startSlotWaits(t, reg), limit > 0; got != want {
			t.Errorf("MaxParallelStarts %d: the registry has the start-slot wait of a StartContainer: %v, want %v", limit, got, want)
		}
	}
}

// startSlotWaits reports whether reg has one observation of
// nodekit_runtime_start_slot_wait_seconds for start_container.
func startSlotWaits(t *testing.T, reg prometheus.Gatherer) bool {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "nodekit_runtime_start_slot_wait_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == "start_container" {
				return m.GetHistogram().GetSampleCount() == 1
			}
		}
	}
	return false
}
