package abtest

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Report is what a harness run measured: the workload and one Result per
// variant, in the order given (the ratios are of each later one over the
// first's).
type Report struct {
	Workload Workload
	Results  []Result
}

// String is the report as Markdown tables: per variant, pod starts (p50,
// p99, high-priority p50), pods refused and evicted, RSS; exit detection,
// CPU and CRI calls per minute; where the detection time goes; then the
// ratio of every figure, B over A.
func (rep Report) String() string {
	w, results := rep.Workload, rep.Results
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
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %.2f | %.0f | %.0f (%.0f) | %s |\n", r.Variant, len(r.Stages.Wake),
			quantile(r.Stages.Wake, 0.5), quantile(r.Stages.Wake, 0.99), quantile(r.Stages.Wake, 1), r.CPU.Seconds(),
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
		if r.Missed < 0 {
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
	b.WriteString("\n")
	for _, r := range results {
		fmt.Fprintf(&b, "%s: every pod ran (or was refused or evicted) %.1fs after start.\n", r.Variant, r.StartTime.Seconds())
	}
	for _, r := range results[min(1, len(results)):] {
		b.WriteString(ratioTable(results[0], r))
	}
	return b.String()
}

// quantile formats the q-quantile of sorted samples, n/a when there are
// none.
func quantile(sorted []time.Duration, q float64) string {
	if len(sorted) == 0 {
		return "n/a"
	}
	return ms(Percentile(sorted, q))
}

// p5099 formats the median and the 99th percentile of sorted samples.
func p5099(sorted []time.Duration) string {
	if len(sorted) == 0 {
		return "n/a"
	}
	return quantile(sorted, 0.5) + " / " + quantile(sorted, 0.99)
}

// startTable is the pod start and admission table.
func startTable(results []Result) string {
	var b strings.Builder
	b.WriteString("| variant | pods started | start p50 | start p99 | high-priority start p50 | refused | evicted | agent RSS |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %d | %d | %.0f MiB |\n", r.Variant, len(r.Starts),
			quantile(r.Starts, 0.5), quantile(r.Starts, 0.99), quantile(r.HighStarts, 0.5),
			r.Refused, r.Evicted, float64(r.RSS)/(1<<20))
	}
	return b.String()
}

// pct is the q-quantile of sorted samples in nanoseconds, -1 when there
// are none (its ratio is then n/a).
func pct(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return -1
	}
	return float64(Percentile(sorted, q))
}

// ratioTable is every headline figure of b over a's.
func ratioTable(a, b Result) string {
	rows := []struct {
		name  string
		a, b  float64
		count bool
	}{
		{"pod start p50", pct(a.Starts, 0.5), pct(b.Starts, 0.5), false},
		{"pod start p99", pct(a.Starts, 0.99), pct(b.Starts, 0.99), false},
		{"high-priority start p50", pct(a.HighStarts, 0.5), pct(b.HighStarts, 0.5), false},
		{"exit detection p50", pct(a.Stages.Wake, 0.5), pct(b.Stages.Wake, 0.5), false},
		{"exit detection p99", pct(a.Stages.Wake, 0.99), pct(b.Stages.Wake, 0.99), false},
		{"agent CRI calls/min", a.CRICalls, b.CRICalls, false},
		{"agent CPU", a.CPU.Seconds(), b.CPU.Seconds(), false},
		{"RSS", float64(a.RSS), float64(b.RSS), false},
		{"pods refused", float64(a.Refused), float64(b.Refused), true},
		{"pods evicted", float64(a.Evicted), float64(b.Evicted), true},
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\nRatios, %s / %s:\n\n| figure | ratio |\n|---|---:|\n", b.Variant, a.Variant)
	for _, r := range rows {
		ratio := "n/a"
		switch {
		case r.a > 0 && r.b >= 0:
			ratio = fmt.Sprintf("%.2f", r.b/r.a)
		case r.count && r.b > 0:
			ratio = fmt.Sprintf("n/a (0 to %.0f)", r.b)
		}
		fmt.Fprintf(&s, "| %s | %s |\n", r.name, ratio)
	}
	return s.String()
}
