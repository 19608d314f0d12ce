// Command plegab is nodekit's A/B harness (named for its first use, the
// PLEG), the command line of package abtest with its built-in swaps: it
// runs one scripted workload under two variants, one after the other, on
// the same runtime, and prints tables of what each measured and their
// ratios, B over A: pod start p50/p99, time to detect a container exit,
// CRI calls per minute, agent CPU and RSS, pods refused and evicted. A
// variant is comma-separated key=value swaps: pleg=generic|evented,
// start=fifo|priority, admission=default|deny.
//
//	plegab --a pleg=generic --b pleg=evented
//	plegab --a start=fifo --b start=priority --sandbox-latency 200ms --max-starting 4
//	plegab --runtime cri --runtime-endpoint unix:///var/lib/nodekit-test/containerd.sock \
//	       --image localhost/nodekit/busybox:1 --cgroup-parent /nodekit-test --pods 100
//
// An embedder compares their own swap with a main of their own over
// abtest.New, Register and Main (see package abtest and docs/ab.md).
package main
