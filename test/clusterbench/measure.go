package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// result is one mode's run.
type result struct {
	mode        string
	nodes, pods int
	nodesReady  time.Duration // process start to every Node Ready
	toRunning   time.Duration // first pod created to every pod Running and Ready
	teardown    time.Duration // pods deleted to every pod gone; 0 without --teardown
	requests    requestCounts // the API server's requests over the run, the benchmark's included
	benchOwn    int64         // the benchmark's own requests among them
	proc        usage         // the agent process over its whole life
	load        string        // load average at the end
}

func (r result) String() string {
	return fmt.Sprintf("nodes Ready after %.1fs, pods Running after %.1fs, teardown %.1fs, %.0f API requests (%.2f per pod), CPU %.1fs, peak RSS %.0f MiB, load %s",
		r.nodesReady.Seconds(), r.toRunning.Seconds(), r.teardown.Seconds(), r.agentRequests(), r.requestsPerPod(),
		r.proc.cpu.Seconds(), mib(r.proc.maxRSS), r.load)
}

func (r result) nodesPerSecond() float64 { return per(float64(r.nodes), r.nodesReady) }
func (r result) podsPerSecond() float64  { return per(float64(r.pods), r.toRunning) }
func (r result) requestsPerPod() float64 { return div(r.agentRequests(), float64(r.pods)) }

// agentRequests are the requests of the run the benchmark did not send.
func (r result) agentRequests() float64 { return max(0, r.requests.total()-float64(r.benchOwn)) }
func (r result) cpuPerNode() float64    { return div(r.proc.cpu.Seconds(), float64(r.nodes)) }
func (r result) rssPerNode() float64    { return div(mib(r.proc.maxRSS), float64(r.nodes)) }

func per(n float64, d time.Duration) float64 { return div(n, d.Seconds()) }

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// measure runs one mode: start its nodes, wait for them Ready, create the
// pods, wait for them Running, delete them, wait for them gone, stop the
// process, and clean the cluster up for the next mode.
func measure(ctx context.Context, c *cluster, m mode, o options) (r result, err error) {
	r = result{mode: m.name, nodes: o.nodes, pods: o.nodes * o.podsPerNode}
	ns := "clusterbench-" + m.name
	dir := filepath.Join(o.work, m.name)
	if err := os.RemoveAll(dir); err != nil {
		return r, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	nodes := make([]string, o.nodes)
	for i := range nodes {
		nodes[i] = nodeName(m.prefix, i)
	}
	if err := c.prepareNamespace(ctx, ns); err != nil {
		return r, err
	}
	w, err := c.watch(ctx, ns, m.name)
	if err != nil {
		return r, err
	}
	defer w.close()
	if _, all := w.runningPods(); all > 0 || len(w.nodes.List()) > 0 {
		return r, fmt.Errorf("namespace %s or the %s nodes are left from an earlier run: delete them first", ns, m.name)
	}
	before, err := scrapeRequests(ctx, c.admin)
	if err != nil {
		return r, err
	}
	own0 := c.requests.Load()

	logf("%s: starting %d nodes", m.name, o.nodes)
	t0 := time.Now()
	p, err := m.start(ctx, c, dir, nodes)
	if err != nil {
		return r, err
	}
	stopped := false
	defer func() {
		if !stopped {
			p.stop()
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if cerr := c.cleanup(cctx, ns, m.name, nodes); cerr != nil && err == nil {
			err = cerr
		}
	}()
	err = waitFor(ctx, "nodes Ready", o.timeout, p.exited, func() (bool, string) {
		n := w.readyNodes()
		return n == o.nodes, fmt.Sprintf("%d of %d nodes Ready", n, o.nodes)
	})
	if err != nil {
		return r, err
	}
	r.nodesReady = time.Since(t0)
	logf("%s: %d nodes Ready after %.1fs; creating %d pods", m.name, o.nodes, r.nodesReady.Seconds(), r.pods)

	t1 := time.Now()
	if err := c.createPods(ctx, ns, m.name, nodes, o.podsPerNode); err != nil {
		return r, err
	}
	logf("%s: %d pods created in %.1fs; waiting for them to run", m.name, r.pods, time.Since(t1).Seconds())
	err = waitFor(ctx, "pods Running", o.timeout, p.exited, func() (bool, string) {
		n, all := w.runningPods()
		return n == r.pods, fmt.Sprintf("%d of %d pods Running (%d seen)", n, r.pods, all)
	})
	if err != nil {
		return r, err
	}
	r.toRunning = time.Since(t1)
	logf("%s: %d pods Running after %.1fs", m.name, r.pods, r.toRunning.Seconds())

	if o.teardown {
		if r.teardown, err = tearDown(ctx, c, w, p, ns, m.name, r.pods, o.timeout); err != nil {
			return r, err
		}
		logf("%s: pods gone after %.1fs; stopping the %s process", m.name, r.teardown.Seconds(), m.name)
	} else {
		logf("%s: no teardown (--teardown=false); stopping the %s process", m.name, m.name)
	}

	// Stop the process and the benchmark's informers before the last
	// scrape: the API server counts a watch when it ends.
	r.proc, stopped = p.stop(), true
	w.close()
	r.benchOwn = c.requests.Load() - own0
	after, err := scrapeRequests(ctx, c.admin)
	if err != nil {
		return r, err
	}
	r.requests = after.minus(before)
	r.load = loadAverage()
	return r, nil
}

// tearDown deletes the mode's pods (each with its own grace period) and
// waits until none is left, returning how long that took.
func tearDown(ctx context.Context, c *cluster, w *watcher, p *process, ns, mode string, pods int, timeout time.Duration) (time.Duration, error) {
	t := time.Now()
	if err := c.deletePods(ctx, ns, mode, nil); err != nil {
		return 0, err
	}
	err := waitFor(ctx, "pods gone", timeout, p.exited, func() (bool, string) {
		_, all := w.runningPods()
		return all == 0, fmt.Sprintf("%d of %d pods left", all, pods)
	})
	return time.Since(t), err
}

// cleanup deletes what is left of a mode's run: its pods (at once), its
// Nodes and their Leases.
func (c *cluster) cleanup(ctx context.Context, ns, mode string, nodes []string) error {
	grace := int64(0)
	if err := c.deletePods(ctx, ns, mode, &grace); err != nil {
		return fmt.Errorf("delete the pods left: %w", err)
	}
	return c.removeNodes(ctx, mode, nodes)
}

// restConfigHost is the API server URL of a kubeconfig.
func restConfigHost(kubeconfig string) (string, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "", fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return rc.Host, nil
}
