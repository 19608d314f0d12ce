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
	b.WriteString("| PLEG | exits | detection p50 | detection p99 | max | agent CPU-s | PLEG CRI calls/min | agent CRI calls/min (reads) | missed events |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		missed := "n/a"
		if r.Missed >= 0 {
			missed = fmt.Sprintf("%.0f", r.Missed)
		}
		var worst = percentile(r.Stages.Wake, 1)
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %.2f | %.0f | %.0f (%.0f) | %s |\n", r.Kind, len(r.Stages.Wake),
			ms(percentile(r.Stages.Wake, 0.5)), ms(percentile(r.Stages.Wake, 0.99)), ms(worst), r.CPU.Seconds(),
			r.PLEGCalls, r.CRICalls, r.ReadCalls, missed)
	}
	b.WriteString("\nWhere the time goes, p50 / p99 (the runtime records an exit when it has handled it; neither PLEG can see it before):\n\n")
	b.WriteString("| PLEG | exit to runtime's record | runtime's record to worker woken | record to ContainerDied | ContainerDied to worker woken |\n")
	b.WriteString("|---|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Kind, p5099(r.Stages.Runtime), p5099(r.Stages.Recorded),
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
		fmt.Fprintf(&b, "\nevented PLEG: %.0f events received, %.0f inspections (GetPodStatus), relists: %s.\n",
			r.Events, r.Inspections, strings.Join(reasons, ", "))
	}
	for _, r := range results {
		fmt.Fprintf(&b, "%s: all pods ran %.1fs after start.\n", r.Kind, r.StartTime.Seconds())
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
