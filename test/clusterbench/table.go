package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// printTable writes the markdown table of the runs and, when both modes
// ran, nodekit's figures as ratios of kwok's; then each run's largest API
// request series.
func printTable(w io.Writer, nodes, podsPerNode int, rs []result) {
	fmt.Fprintf(w, "\n%d nodes x %d pods per node\n\n", nodes, podsPerNode)
	fmt.Fprintln(w, "| mode | nodes Ready/s | pods Running/s | API requests per pod | CPU s per node | peak RSS MiB per node | to all Running (s) | teardown (s) | load average at the end |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %.2f | %.1f | %.2f | %.3f | %.2f | %.1f | %s | %s |\n", r.mode, r.nodesPerSecond(), r.podsPerSecond(),
			r.requestsPerPod(), r.cpuPerNode(), r.rssPerNode(), r.toRunning.Seconds(), seconds(r.teardown), r.load)
	}
	var nk, kw *result
	for i := range rs {
		switch rs[i].mode {
		case "nodekit":
			nk = &rs[i]
		case "kwok":
			kw = &rs[i]
		}
	}
	if nk != nil && kw != nil {
		fmt.Fprintf(w, "| **nodekit/kwok** | **%s** | **%s** | **%s** | **%s** | **%s** | **%s** | **%s** | |\n",
			ratio(nk.nodesPerSecond(), kw.nodesPerSecond()), ratio(nk.podsPerSecond(), kw.podsPerSecond()),
			ratio(nk.requestsPerPod(), kw.requestsPerPod()), ratio(nk.cpuPerNode(), kw.cpuPerNode()),
			ratio(nk.rssPerNode(), kw.rssPerNode()), ratio(nk.toRunning.Seconds(), kw.toRunning.Seconds()),
			ratio(nk.teardown.Seconds(), kw.teardown.Seconds()))
	}
	for _, r := range rs {
		fmt.Fprintf(w, "\n%s: API server requests over the run by verb and resource (the benchmark's own %d included: its pod creates and deletes, its informers, two scrapes): %s\n",
			r.mode, r.benchOwn, topRequests(r.requests, 10))
	}
}

// seconds formats d as "12.3", or "-" for a teardown that was not run.
func seconds(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", d.Seconds())
}

// ratio formats a/b as "1.23x", or "n/a" when b is 0.
func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// topRequests formats the n largest series as "VERB resource N, ...".
func topRequests(c requestCounts, n int) string {
	var parts []string
	for _, k := range c.top(n) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, c[k]))
	}
	return strings.Join(parts, ", ")
}
