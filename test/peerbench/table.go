package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// row holds the runs of both agents (kubelet first) with one pod count.
type row struct {
	pods int
	runs [2][]measurement
}

// printTable writes the markdown table: each agent's median over the
// rounds, and nodekit's figures as ratios of the kubelet's.
func printTable(w io.Writer, o options, rows []row) {
	fmt.Fprintf(w, "\nsteady window %v, %d round(s), load average at the end %s", o.steady, o.rounds, loadAverage())
	if len(o.nodekitEnv) > 0 {
		fmt.Fprintf(w, ", nodekit's environment adds %s", strings.Join(o.nodekitEnv, " "))
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| pods | agent | start CPU (s) | steady CPU (mcores) | RSS (MiB) | peak RSS (MiB) | anonymous RSS (MiB) | to all Running (s) | teardown (s) | mean relist (ms) |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if len(r.runs[0]) == 0 || len(r.runs[1]) == 0 {
			for i, runs := range r.runs {
				if len(runs) > 0 {
					m := median(runs)
					fmt.Fprintf(w, "| %d | %s | %.2f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f |\n", r.pods, []string{"kubelet", "nodekit"}[i],
						m.startCPU.Seconds(), m.millicores(), mib(m.mem.rss), mib(m.mem.hwm), mib(m.mem.anon), m.toRunning.Seconds(), m.teardown.Seconds(), ms(m.relist))
				}
			}
			continue
		}
		k, n := median(r.runs[0]), median(r.runs[1])
		for i, m := range []measurement{k, n} {
			fmt.Fprintf(w, "| %d | %s | %.2f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f |\n", r.pods, []string{"kubelet", "nodekit"}[i],
				m.startCPU.Seconds(), m.millicores(), mib(m.mem.rss), mib(m.mem.hwm), mib(m.mem.anon), m.toRunning.Seconds(), m.teardown.Seconds(), ms(m.relist))
		}
		fmt.Fprintf(w, "| %d | **ratio** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** |\n", r.pods,
			ratio(n.startCPU.Seconds(), k.startCPU.Seconds()), ratio(n.millicores(), k.millicores()),
			ratio(mib(n.mem.rss), mib(k.mem.rss)), ratio(mib(n.mem.hwm), mib(k.mem.hwm)), ratio(mib(n.mem.anon), mib(k.mem.anon)),
			ratio(n.toRunning.Seconds(), k.toRunning.Seconds()), ratio(n.teardown.Seconds(), k.teardown.Seconds()), ratio(ms(n.relist), ms(k.relist)))
	}
	fmt.Fprintln(w, "\nPLEG and per-pod start-up (start-up: a pod's arrival, the agent's config.seen stamp, to its container seen running over CRI; "+
		"in the runtime: the sandbox's creation to the container's start as containerd records them; the rest: the difference, per pod)")
	fmt.Fprintln(w, "\n| pods | agent | mean relist, steady (ms) | mean relist, whole run (ms) | longest relist at most (s) | PLEG-unhealthy log lines | start-up p50 (s) | start-up p99 (s) | in the runtime p50 (s) | in the runtime p99 (s) | the rest p50 (s) | the rest p99 (s) |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		for i, runs := range r.runs {
			if len(runs) == 0 {
				continue
			}
			m := median(runs)
			fmt.Fprintf(w, "| %d | %s | %.1f | %.1f | %g | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r.pods, []string{"kubelet", "nodekit"}[i],
				ms(m.relist), ms(m.relistAll), m.relistMax, m.unhealthy, m.startup.total.p50.Seconds(), m.startup.total.p99.Seconds(),
				m.startup.cri.p50.Seconds(), m.startup.cri.p99.Seconds(), m.startup.agent.p50.Seconds(), m.startup.agent.p99.Seconds())
		}
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// median returns, field by field, the median of ms (the lower middle one
// for an even count).
func median(ms []measurement) measurement {
	pick := func(f func(measurement) float64) int {
		idx := make([]int, len(ms))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int {
			switch x, y := f(ms[a]), f(ms[b]); {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		})
		return idx[(len(idx)-1)/2]
	}
	d := func(f func(measurement) time.Duration) time.Duration {
		return f(ms[pick(func(m measurement) float64 { return float64(f(m)) })])
	}
	u := func(f func(measurement) uint64) uint64 {
		return f(ms[pick(func(m measurement) float64 { return float64(f(m)) })])
	}
	q := func(f func(measurement) quantiles) quantiles {
		return quantiles{
			p50: d(func(m measurement) time.Duration { return f(m).p50 }),
			p99: d(func(m measurement) time.Duration { return f(m).p99 }),
			max: d(func(m measurement) time.Duration { return f(m).max }),
		}
	}
	return measurement{
		startCPU:  d(func(m measurement) time.Duration { return m.startCPU }),
		steadyCPU: d(func(m measurement) time.Duration { return m.steadyCPU }),
		steady:    ms[0].steady,
		mem: memory{
			rss:  u(func(m measurement) uint64 { return m.mem.rss }),
			hwm:  u(func(m measurement) uint64 { return m.mem.hwm }),
			anon: u(func(m measurement) uint64 { return m.mem.anon }),
		},
		toRunning: d(func(m measurement) time.Duration { return m.toRunning }),
		teardown:  d(func(m measurement) time.Duration { return m.teardown }),
		relist:    d(func(m measurement) time.Duration { return m.relist }),
		relistAll: d(func(m measurement) time.Duration { return m.relistAll }),
		relistMax: ms[pick(func(m measurement) float64 { return m.relistMax })].relistMax,
		unhealthy: ms[pick(func(m measurement) float64 { return float64(m.unhealthy) })].unhealthy,
		startup: startup{
			total: q(func(m measurement) quantiles { return m.startup.total }),
			cri:   q(func(m measurement) quantiles { return m.startup.cri }),
			agent: q(func(m measurement) quantiles { return m.startup.agent }),
		},
	}
}
