// Command peerbench runs nodekit and the upstream kubelet, one after the
// other, each standalone on the same private containerd with the same N
// static pods, and prints what each costs: CPU until every pod runs, CPU
// over a steady window, resident memory, time to all Running and teardown
// time, with nodekit's figures as ratios of the kubelet's.
//
// It is the peer benchmark of docs/benchmarks.md: hack/peer-bench.sh
// builds both agents and a private containerd and runs it. It measures real
// processes on a real runtime, so its figures move with the machine's load:
// each agent runs right after the other, and the report says how loaded the
// machine was.
package main
