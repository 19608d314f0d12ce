// Package startgatetest is the conformance suite of agent.StartGate: the
// contract every start gate must keep for the agent to start each admitted
// pod exactly once.
//
// On batches of pods with assorted priorities, ages and names, the suite
// checks that Order is a permutation (no pod lost, added or repeated) and
// mutates no pod; that Ready returns only waiting pods, each once, and
// mutates none; that Ready, with nothing starting, lets at least one pod go
// (otherwise pods could wait forever on an idle node); and that driving the
// gate as the agent does (ask, start what it lets go, mark it running, ask
// again) starts every pod exactly once.
package startgatetest
