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

// printTable writes the markdown tables: each agent's median over the
// rounds, and nodekit's figures as ratios of the kubelet's.
func printTable(w io.Writer, o options, rows []row) {
	fmt.Fprintf(w, "\nsteady window %v, %d round(s), %s first, load average at the end %s", o.steady, o.rounds, o.first, loadAverage())
	if len(o.nodekitEnv) > 0 {
		fmt.Fprintf(w, ", nodekit's environment adds %s", strings.Join(o.nodekitEnv, " "))
	}
	if len(o.nodekitFlags) > 0 {
		fmt.Fprintf(w, ", nodekit runs with %s", strings.Join(o.nodekitFlags, " "))
	}
	if o.scrapeEvery > 0 {
		fmt.Fprintf(w, ", /metrics/resource scraped every %v in the steady window", o.scrapeEvery)
	} else {
		fmt.Fprint(w, ", no /metrics/resource scrape")
	}
	if o.dropBinaryCache {
		fmt.Fprint(w, ", binaries dropped from the page cache before each start")
	}
	fmt.Fprint(w, "\n\n")
	for _, a := range []struct{ name, path string }{{"kubelet", o.kubelet}, {"nodekit", o.nodekit}} {
		if b, err := sectionsOf(a.path); err != nil {
			fmt.Fprintf(w, "- %s binary %s: %v\n", a.name, a.path, err)
		} else {
			fmt.Fprintf(w, "- %s binary: %s\n", a.name, b)
		}
	}
	fmt.Fprintln(w)
	names := []string{"kubelet", "nodekit"}
	fmt.Fprintln(w, "| pods | agent | start CPU (s) | steady CPU (mcores) | RSS (MiB) | peak RSS (MiB) | anonymous RSS (MiB) | file-backed RSS (MiB) | to all Running (s) | teardown (s) | mean relist (ms) |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		var med [2]*measurement
		for i, runs := range r.runs {
			if len(runs) == 0 {
				continue
			}
			m := median(runs)
			med[i] = &m
			fmt.Fprintf(w, "| %d | %s | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f |\n", r.pods, names[i],
				m.startCPU.Seconds(), m.millicores(), mib(m.mem.rss), mib(m.mem.hwm), mib(m.mem.anon), mib(m.mem.file),
				m.toRunning.Seconds(), m.teardown.Seconds(), ms(m.relist))
		}
		if k, n := med[0], med[1]; k != nil && n != nil {
			fmt.Fprintf(w, "| %d | **ratio** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** | **%.2fx** |\n", r.pods,
				ratio(n.startCPU.Seconds(), k.startCPU.Seconds()), ratio(n.millicores(), k.millicores()),
				ratio(mib(n.mem.rss), mib(k.mem.rss)), ratio(mib(n.mem.hwm), mib(k.mem.hwm)), ratio(mib(n.mem.anon), mib(k.mem.anon)),
				ratio(mib(n.mem.file), mib(k.mem.file)),
				ratio(n.toRunning.Seconds(), k.toRunning.Seconds()), ratio(n.teardown.Seconds(), k.teardown.Seconds()), ratio(ms(n.relist), ms(k.relist)))
		}
	}
	if o.scrapeEvery > 0 {
		printScrapes(w, rows)
	}
	for _, r := range rows {
		for i, runs := range r.runs {
			if len(runs) > 0 && runs[0].resident != nil {
				fmt.Fprintf(w, "\n%s, %d pods (first round), ", names[i], r.pods)
				runs[0].resident.write(w, 15)
			}
		}
	}
	fmt.Fprintln(w, "\nPLEG and per-pod start-up (start-up: a pod's arrival, the agent's config.seen stamp, to its container seen running over CRI; "+
		"in the runtime: the sandbox's creation to the container's start as containerd records them; the rest: the difference, per pod)")
	fmt.Fprintln(w, "\n| pods | agent | mean relist, steady (ms) | mean relist, whole run (ms) | longest relist at most (s) | PLEG-unhealthy log lines | start-up p50 (s) | start-up p99 (s) | in the runtime p50 (s) | in the runtime p99 (s) | the rest p50 (s) | the rest p99 (s) |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	eachMedian(rows, func(pods int, agent string, m measurement) {
		fmt.Fprintf(w, "| %d | %s | %.1f | %.1f | %g | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", pods, agent,
			ms(m.relist), ms(m.relistAll), m.relistMax, m.unhealthy, m.startup.total.p50.Seconds(), m.startup.total.p99.Seconds(),
			m.startup.cri.p50.Seconds(), m.startup.cri.p99.Seconds(), m.startup.agent.p50.Seconds(), m.startup.agent.p99.Seconds())
	})
	printMeans(w, rows)
}

// eachMedian calls f with each row's and agent's median measurement, the
// kubelet's first; agents without runs are left out.
func eachMedian(rows []row, f func(pods int, agent string, m measurement)) {
	for _, r := range rows {
		for i, runs := range r.runs {
			if len(runs) > 0 {
				f(r.pods, []string{"kubelet", "nodekit"}[i], median(runs))
			}
		}
	}
}

// printMeans writes the mean start-up per pod, split three ways: means
// add up, so the wait for a start slot (nodekit with
// --max-parallel-starts) comes out of "the rest" (a RunPodSandbox's wait,
// before the sandbox exists) and out of "in the runtime" (the waits of
// CreateContainer and StartContainer) exactly, per pod on average.
func printMeans(w io.Writer, rows []row) {
	fmt.Fprintln(w, "\nMean start-up per pod, split: the agent's own (the rest, less the wait for a start slot before the sandbox), "+
		"the wait for a start slot (all three stages), and the runtime's own (in the runtime, less the waits of CreateContainer and StartContainer); "+
		"last, the agent's own per pod, each pod's rest less its own wait before the sandbox (nodekit logs each wait at --v=2; - without it)")
	fmt.Fprintln(w, "\n| pods | agent | start-up (s) | in the runtime (s) | the rest (s) | slot wait before the sandbox (s) | slot wait, create and start (s) | the agent's own (s) | the runtime's own (s) | slot-waited calls (sandbox / create / start) | the agent's own per pod, p50 / p99 (s) |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	eachMedian(rows, func(pods int, agent string, m measurement) {
		sandbox := m.slotWait.perPod(opSandbox, pods)
		later := m.slotWait.perPod(opCreate, pods) + m.slotWait.perPod(opStart, pods)
		calls := "none"
		if len(m.slotWait) > 0 {
			calls = fmt.Sprintf("%d / %d / %d", m.slotWait.calls(opSandbox), m.slotWait.calls(opCreate), m.slotWait.calls(opStart))
		}
		own := "-"
		if m.startup.ownKnown {
			own = fmt.Sprintf("%.2f / %.2f", m.startup.own.p50.Seconds(), m.startup.own.p99.Seconds())
		}
		fmt.Fprintf(w, "| %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", pods, agent,
			m.startup.total.mean.Seconds(), m.startup.cri.mean.Seconds(), m.startup.agent.mean.Seconds(), sandbox.Seconds(), later.Seconds(),
			(m.startup.agent.mean - sandbox).Seconds(), (m.startup.cri.mean - later).Seconds(), calls, own)
	})
}

// printScrapes writes the table of the metrics-server-like scrapes: over
// all rounds, how many were made and failed (a failure is shown, with its
// reason, never left out), the successful ones' mean latency (the median
// of the rounds') and the pods the last one reported.
func printScrapes(w io.Writer, rows []row) {
	fmt.Fprintln(w, "\nmetrics-server's scrape of /metrics/resource in the steady window (read-only ports, no authentication)")
	fmt.Fprintln(w, "\n| pods | agent | scrapes | failed | mean scrape (ms) | pods in the last scrape |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|")
	var failures []string
	for _, r := range rows {
		for i, runs := range r.runs {
			if len(runs) == 0 {
				continue
			}
			var total scrapes
			for _, m := range runs {
				total.n += m.scrape.n
				total.failed += m.scrape.failed
				total.errs = append(total.errs, m.scrape.errs...)
			}
			m := median(runs)
			failed := fmt.Sprint(total.failed)
			if total.failed > 0 {
				failed = fmt.Sprintf("**%d FAILED**", total.failed)
				failures = append(failures, fmt.Sprintf("%s, %d pods: %v", []string{"kubelet", "nodekit"}[i], r.pods, total.err()))
			}
			fmt.Fprintf(w, "| %d | %s | %d | %s | %.1f | %d |\n", r.pods, []string{"kubelet", "nodekit"}[i], total.n, failed, ms(m.scrape.mean()), m.scrape.pods)
		}
	}
	for _, f := range failures {
		fmt.Fprintf(w, "\n**scrape failure**: %s\n", f)
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
			p50:  d(func(m measurement) time.Duration { return f(m).p50 }),
			p99:  d(func(m measurement) time.Duration { return f(m).p99 }),
			max:  d(func(m measurement) time.Duration { return f(m).max }),
			mean: d(func(m measurement) time.Duration { return f(m).mean }),
		}
	}
	// The steady CPU and its window come from one run, the one with the
	// median rate.
	steady := ms[pick(func(m measurement) float64 { return m.millicores() })]
	return measurement{
		startCPU:  d(func(m measurement) time.Duration { return m.startCPU }),
		steadyCPU: steady.steadyCPU,
		steady:    steady.steady,
		scrape:    ms[pick(func(m measurement) float64 { return float64(m.scrape.mean()) })].scrape,
		mem: memory{
			rss:  u(func(m measurement) uint64 { return m.mem.rss }),
			hwm:  u(func(m measurement) uint64 { return m.mem.hwm }),
			anon: u(func(m measurement) uint64 { return m.mem.anon }),
			file: u(func(m measurement) uint64 { return m.mem.file }),
		},
		toRunning: d(func(m measurement) time.Duration { return m.toRunning }),
		teardown:  d(func(m measurement) time.Duration { return m.teardown }),
		relist:    d(func(m measurement) time.Duration { return m.relist }),
		relistAll: d(func(m measurement) time.Duration { return m.relistAll }),
		relistMax: ms[pick(func(m measurement) float64 { return m.relistMax })].relistMax,
		unhealthy: ms[pick(func(m measurement) float64 { return float64(m.unhealthy) })].unhealthy,
		slotWait:  ms[pick(func(m measurement) float64 { return m.slotWait[opSandbox].sum })].slotWait,
		startup: startup{
			total: q(func(m measurement) quantiles { return m.startup.total }),
			cri:   q(func(m measurement) quantiles { return m.startup.cri }),
			agent: q(func(m measurement) quantiles { return m.startup.agent }),
			own:   q(func(m measurement) quantiles { return m.startup.own }),
			// Known only when known in every round.
			ownKnown: !slices.ContainsFunc(ms, func(m measurement) bool { return !m.startup.ownKnown }),
		},
	}
}
