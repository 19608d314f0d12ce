package abtest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Percentile returns the q-quantile (nearest rank) of sorted samples.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss is the process's resident set size in bytes, from /proc/self/statm
// (0 when it cannot be read).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0
	}
	return resident * int64(os.Getpagesize())
}

// readCalls are the CRI operations that only read the runtime's state.
var readCalls = map[string]bool{
	"list_podsandbox": true, "list_containers": true, "podsandbox_status": true, "container_status": true,
}

// counters is a snapshot of the metrics the harness reports.
type counters struct {
	criCalls, readCalls float64
	missed, events      float64
	inspections         float64
	relists             map[string]float64
}

// snapshot reads the counters from the agent's registry.
func snapshot(g prometheus.Gatherer) counters {
	c := counters{relists: map[string]float64{}}
	families, err := g.Gather()
	if err != nil {
		return c
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue()
			switch f.GetName() {
			case "kubelet_runtime_operations_total":
				c.criCalls += v
				for _, l := range m.GetLabel() {
					if l.GetName() == "operation_type" && readCalls[l.GetValue()] {
						c.readCalls += v
					}
				}
			case "nodekit_evented_pleg_missed_events_total":
				c.missed += v
			case "nodekit_evented_pleg_events_total":
				c.events += v
			case "nodekit_evented_pleg_inspections_total":
				c.inspections += v
			case "nodekit_evented_pleg_relists_total":
				for _, l := range m.GetLabel() {
					c.relists[l.GetValue()] += v
				}
			}
		}
	}
	return c
}

// countingRuntime is the runtime as the PLEG sees it, counting the CRI
// calls its reads make: GetPods lists sandboxes and containers (2 calls);
// GetPodStatus lists both for the pod and asks each sandbox's and each
// container's status.
type countingRuntime struct {
	noderuntime.Runtime
	calls atomic.Int64
	rec   *wakeRecorder
	// events is the runtime's event stream, for the recorder.
	events pleg.EventSource
	// kind is the PLEG swap built.
	kind pleg.Kind
}

func (c *countingRuntime) GetPods(ctx context.Context, all bool) ([]*noderuntime.Pod, error) {
	c.calls.Add(2)
	return c.Runtime.GetPods(ctx, all)
}

func (c *countingRuntime) GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*noderuntime.PodStatus, error) {
	s, err := c.Runtime.GetPodStatus(ctx, uid, name, namespace)
	n := int64(2)
	if s != nil {
		n += int64(len(s.SandboxStatuses) + len(s.ContainerStatuses))
	}
	c.calls.Add(n)
	return s, err
}

// PodStatusFromEvent lets the evented PLEG decode events as it would
// without the wrapper; it makes no CRI call.
func (c *countingRuntime) PodStatusFromEvent(ev *runtimeapi.ContainerEventResponse) (*noderuntime.PodStatus, bool) {
	if d, ok := c.Runtime.(pleg.EventDecoder); ok {
		return d.PodStatusFromEvent(ev)
	}
	return nil, false
}

// swap is the fx decorator that rebuilds the PLEG the configuration names
// over the counting runtime, its events tapped (the PLEG the defaults
// built is never run).
func (c *countingRuntime) swap(_ pleg.Interface, rt noderuntime.Runtime, rs criapi.RuntimeService, cache *pleg.Cache,
	clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg pleg.Config) (pleg.Interface, error) {
	c.Runtime, c.events, c.kind = rt, rs, cfg.Kind
	p, err := pleg.New(rs, c, cache, clk, reg, log, cfg)
	if err != nil {
		return nil, err
	}
	return &tappedPLEG{Interface: p, r: c.rec, out: make(chan *pleg.Event, 1000)}, nil
}
