package main

import (
	"context"
	"fmt"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// slotWaitMetric is nodekit's histogram of the wait for a start slot
// (--max-parallel-starts), by operation type; the kubelet has none, and
// nodekit has it only with a bound.
const slotWaitMetric = "nodekit_runtime_start_slot_wait_seconds"

// The operation types of the three bounded calls.
const (
	opSandbox = "run_podsandbox"
	opCreate  = "create_container"
	opStart   = "start_container"
)

// slotWaits are the waits for a start slot until every pod ran, by
// operation type: a RunPodSandbox's wait comes before the sandbox exists
// (so within "the rest" of a pod's start-up), a CreateContainer's and a
// StartContainer's between the sandbox's creation and the container's
// start (within "in the runtime").
type slotWaits map[string]relistTotals

// scrapeSlotWaits reads the start slot histograms from an agent's
// /metrics; none (the kubelet, or nodekit without a bound) is an empty
// answer, not an error.
func scrapeSlotWaits(ctx context.Context, url string) (slotWaits, error) {
	families, err := scrapeFamilies(ctx, url)
	if err != nil {
		return nil, err
	}
	return slotWaitsOf(families[slotWaitMetric]), nil
}

func slotWaitsOf(f *dto.MetricFamily) slotWaits {
	w := slotWaits{}
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		return w
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "operation_type" {
				w[l.GetValue()] = totalsOf(m.GetHistogram())
			}
		}
	}
	return w
}

// perPod is the total wait of operation op divided among n pods: the mean
// a pod waited in that stage.
func (w slotWaits) perPod(op string, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(w[op].sum / float64(n) * float64(time.Second))
}

// calls is how many calls of op were counted.
func (w slotWaits) calls(op string) uint64 { return w[op].count }

func (w slotWaits) String() string {
	if len(w) == 0 {
		return "none"
	}
	s := ""
	for _, op := range []string{opSandbox, opCreate, opStart} {
		t := w[op]
		s += fmt.Sprintf("%s %d calls, %.2fs in all; ", op, t.count, t.sum)
	}
	return s[:len(s)-2]
}
