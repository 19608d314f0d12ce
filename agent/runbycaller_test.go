package agent

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/testr"

	"github.com/nodekit/nodekit/pleg"
)

// countingPLEG counts its Run calls.
type countingPLEG struct {
	fakePLEG
	runs atomic.Int32
}

func (p *countingPLEG) Run(ctx context.Context) error {
	p.runs.Add(1)
	<-ctx.Done()
	return nil
}

// With RunByCaller (as agent.Module builds it) Run leaves the subsystems to
// the runnables group; without it, Run runs them itself.
func TestRunRunsTheSubsystemsUnlessTheCallerDoes(t *testing.T) {
	for _, byCaller := range []bool{false, true} {
		lt := newLoopTest(t, Config{})
		p := &countingPLEG{fakePLEG: fakePLEG{events: make(chan *pleg.Event)}}
		lt.agent = New(Deps{
			Config: lt.config, PLEG: p, Workers: lt.workers, Queue: lt.queue, Runtime: lt.rt,
			Statuses: NewMemoryStatuses(), Registry: NewRegistry(), RunByCaller: byCaller,
		}, lt.clk, testr.New(t), Config{NodeName: "n"})
		lt.start()
		lt.stop()
		if got, want := p.runs.Load(), map[bool]int32{false: 1, true: 0}[byCaller]; got != want {
			t.Errorf("RunByCaller=%t: the PLEG ran %d times, want %d", byCaller, got, want)
		}
	}
}
