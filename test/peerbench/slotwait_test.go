package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const slotWaitText = `# TYPE nodekit_runtime_start_slot_wait_seconds histogram
nodekit_runtime_start_slot_wait_seconds_bucket{operation_type="run_podsandbox",le="1"} 2
nodekit_runtime_start_slot_wait_seconds_bucket{operation_type="run_podsandbox",le="+Inf"} 4
nodekit_runtime_start_slot_wait_seconds_sum{operation_type="run_podsandbox"} 20
nodekit_runtime_start_slot_wait_seconds_count{operation_type="run_podsandbox"} 4
nodekit_runtime_start_slot_wait_seconds_bucket{operation_type="start_container",le="+Inf"} 4
nodekit_runtime_start_slot_wait_seconds_sum{operation_type="start_container"} 2
nodekit_runtime_start_slot_wait_seconds_count{operation_type="start_container"} 4
`

func parseFamilies(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	f, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSlotWaitsByOperation(t *testing.T) {
	w := slotWaitsOf(parseFamilies(t, slotWaitText)[slotWaitMetric])
	if w.calls(opSandbox) != 4 || w.perPod(opSandbox, 4) != 5*time.Second {
		t.Fatalf("sandbox waits: %d calls, %v per pod; want 4 and 5s", w.calls(opSandbox), w.perPod(opSandbox, 4))
	}
	if w.calls(opCreate) != 0 || w.perPod(opCreate, 4) != 0 {
		t.Fatalf("create waits absent from the answer: %d calls, %v", w.calls(opCreate), w.perPod(opCreate, 4))
	}
	if got := slotWaitsOf(nil); len(got) != 0 || got.String() != "none" {
		t.Fatalf("no histogram (the kubelet): %v", got)
	}
}

func TestPrintMeansSplitsTheSlotWait(t *testing.T) {
	m := measurement{
		startup: startup{
			total: quantiles{mean: 20 * time.Second},
			cri:   quantiles{mean: 8 * time.Second},
			agent: quantiles{mean: 12 * time.Second},
		},
		slotWait: slotWaitsOf(parseFamilies(t, slotWaitText)[slotWaitMetric]),
	}
	var b bytes.Buffer
	printMeans(&b, []row{{pods: 4, runs: [2][]measurement{{{startup: m.startup}}, {m}}}})
	out := b.String()
	// nodekit: the rest 12 s less 5 s before the sandbox; in the runtime
	// 8 s less 0.5 s of start waits.
	if want := "| 4 | nodekit | 20.00 | 8.00 | 12.00 | 5.00 | 0.50 | 7.00 | 7.50 | 4 / 0 / 4 |"; !strings.Contains(out, want) {
		t.Fatalf("nodekit's row missing %q in:\n%s", want, out)
	}
	if want := "| 4 | kubelet | 20.00 | 8.00 | 12.00 | 0.00 | 0.00 | 12.00 | 8.00 | none |"; !strings.Contains(out, want) {
		t.Fatalf("the kubelet's row missing %q in:\n%s", want, out)
	}
}
