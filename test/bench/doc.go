// Package bench holds nodekit's benchmark suite on the simulated runtime:
// pod start throughput and latency, PLEG relist cost and memory per pod,
// each against a baseline measured in the same run where one exists. See
// docs/benchmarks.md for how to run it and the latest figures.
package bench
