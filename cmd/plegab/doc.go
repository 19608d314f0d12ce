// Command plegab is nodekit's A/B harness (named for its first use, the
// PLEG): it runs one scripted workload under two (or more) variants, one
// after the other, on the same runtime, and prints tables: pod start p50
// and p99 (and of the high-priority pods), how long after a container
// exits its pod worker is woken with the exit in hand (p50, p99, max), the
// agent's CPU time and RSS, the CRI calls per minute, the pods admission
// refused, the evented PLEG's missed events, and the ratio of every figure,
// B over A. A variant is comma-separated key=value swaps (see Variant):
// pleg=generic|evented, start=fifo|priority, admission=default|deny.
//
//	plegab --a pleg=generic --b pleg=evented
//	plegab --a start=fifo --b start=priority --sandbox-latency 200ms --max-starting 4
//
// The workload is N static pods of one container each that exits (code 1)
// a known time after each start (ExitAfter, spread over ExitSpread across
// the pods), and is restarted by the agent with the kubelet's
// CrashLoopBackOff. Measurement starts once every pod runs and lasts
// Duration. Each run is a whole nodekit agent (nodekit.New with the
// defaults) with its own instance ID; only the PLEG differs.
//
//	plegab --runtime sim --pods 100 --duration 2m
//	plegab --runtime cri --runtime-endpoint unix:///var/lib/nodekit-test/containerd.sock \
//	       --image localhost/nodekit/busybox:1 --cgroup-parent /nodekit-test --pods 100
//
// On the simulated runtime (--runtime sim) the runtime runs in the harness's
// process, so the CPU column includes it; on a real runtime it is the
// agent's alone.
package main
