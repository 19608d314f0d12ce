// Package simharness runs the whole nodekit pipeline — the CRI runtime
// manager, the generic PLEG, the pod workers and the agent, all unchanged —
// on the simulated runtime (runtime/sim) and a fake clock, for tests and
// benchmarks that drive scripted scenarios by stepping the clock.
//
// A Harness replaces only the pod source: Add and Remove feed pod updates
// straight to the agent, and every source counts as seen. Time moves only
// when the test calls Step or StepUntil; after each step the harness lets
// the pipeline settle (until every other goroutine is blocked) before the
// clock moves again, so that timings read from the clock are those of the
// pipeline, not of the host's scheduler.
//
// # Concurrency
//
// A Harness is used by one test goroutine. It assumes that the test binary
// runs nothing else meanwhile (no parallel tests): Settle waits for every
// goroutine of the process to block.
//
// # Extending
//
// Options carry every subsystem's Config; a scenario that needs another
// piece (a different PLEG, a status store that records history) builds its
// own pipeline the way New does.
package simharness
