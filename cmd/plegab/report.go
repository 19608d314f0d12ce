package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nodekit/nodekit/pleg"
)

// Table formats the results as a Markdown table, with the workload and the
// evented PLEG's details below it.
func Table(w Workload, results []Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d pods on %s, containers exiting %v-%v after each start (code 1), CrashLoopBackOff from %v; %v measured after all pods ran.\n\n",
		w.Pods, w.Runtime, w.ExitAfter, w.ExitAfter+w.ExitSpread, w.BackOff, w.Duration)
	b.WriteString(startTable(results))
	b.WriteString("\n| variant | exits | detection p50 | detection p99 | max | agent CPU-s | PLEG CRI calls/min | agent CRI calls/min (reads) | missed events |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		missed := "n/a"
		if r.Missed >= 0 {
			missed = fmt.Sprintf("%.0f", r.Missed)
		}
		var worst = percentile(r.Stages.Wake, 1)
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %.2f | %.0f | %.0f (%.0f) | %s |\n", r.Variant, len(r.Stages.Wake),
			ms(percentile(r.Stages.Wake, 0.5)), ms(percentile(r.Stages.Wake, 0.99)), ms(worst), r.CPU.Seconds(),
			r.PLEGCalls, r.CRICalls, r.ReadCalls, missed)
	}
	b.WriteString("\nWhere the time goes, p50 / p99 (the runtime records an exit when it has handled it; neither PLEG can see it before):\n\n")
	b.WriteString("| variant | exit to runtime's record | runtime's record to worker woken | record to ContainerDied | ContainerDied to worker woken |\n")
	b.WriteString("|---|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Variant, p5099(r.Stages.Runtime), p5099(r.Stages.Recorded),
			p5099(r.Stages.Emit), p5099(r.Stages.Handoff))
	}
	for _, r := range results {
		if r.Kind != pleg.KindEvented {
			continue
		}
		reasons := make([]string, 0, len(r.Relists))
		for reason, n := range r.Relists {
			if n > 0 {
				reasons = append(reasons, fmt.Sprintf("%s %.0f", reason, n))
			}
		}
		sort.Strings(reasons)
		fmt.Fprintf(&b, "\n%s: %.0f events received, %.0f inspections (GetPodStatus), relists: %s.\n",
			r.Variant, r.Events, r.Inspections, strings.Join(reasons, ", "))
	}
	for _, r := range results {
		fmt.Fprintf(&b, "%s: all pods ran %.1fs after start.\n", r.Variant, r.StartTime.Seconds())
	}
	if len(results) >= 2 {
		b.WriteString(ratioTable(results[0], results[1]))
	}
	return b.String()
}

// p5099 formats the median and the 99th percentile of sorted samples.
func p5099(sorted []time.Duration) string {
	if len(sorted) == 0 {
		return "n/a"
	}
	return ms(percentile(sorted, 0.5)) + " / " + ms(percentile(sorted, 0.99))
}

// startTable is the pod start and admission table.
func startTable(results []Result) string {
	var b strings.Builder
	b.WriteString("| variant | pods started | start p50 | start p99 | high-priority start p50 | refused | agent RSS |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %d | %.0f MiB |\n", r.Variant, len(r.Starts),
			ms(percentile(r.Starts, 0.5)), ms(percentile(r.Starts, 0.99)), ms(percentile(r.HighStarts, 0.5)),
			r.Refused, float64(r.RSS)/(1<<20))
	}
	return b.String()
}

// ratioTable is every headline figure of b over a's.
func ratioTable(a, b Result) string {
	rows := []struct {
		name string
		a, b float64
	}{
		{"pod start p50", float64(percentile(a.Starts, 0.5)), float64(percentile(b.Starts, 0.5))},
		{"pod start p99", float64(percentile(a.Starts, 0.99)), float64(percentile(b.Starts, 0.99))},
		{"high-priority start p50", float64(percentile(a.HighStarts, 0.5)), float64(percentile(b.HighStarts, 0.5))},
		{"exit detection p50", float64(percentile(a.Stages.Wake, 0.5)), float64(percentile(b.Stages.Wake, 0.5))},
		{"exit detection p99", float64(percentile(a.Stages.Wake, 0.99)), float64(percentile(b.Stages.Wake, 0.99))},
		{"agent CRI calls/min", a.CRICalls, b.CRICalls},
		{"agent CPU", a.CPU.Seconds(), b.CPU.Seconds()},
		{"RSS", float64(a.RSS), float64(b.RSS)},
		{"pods refused", float64(a.Refused), float64(b.Refused)},
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\nRatios, %s / %s:\n\n| figure | ratio |\n|---|---:|\n", b.Variant, a.Variant)
	for _, r := range rows {
		ratio := "n/a"
		if r.a > 0 {
			ratio = fmt.Sprintf("%.2f", r.b/r.a)
		}
		fmt.Fprintf(&s, "| %s | %s |\n", r.name, ratio)
	}
	return s.String()
}
