package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// measurement is one agent's run with n pods.
type measurement struct {
	startCPU  time.Duration // CPU from process start until every pod ran
	steadyCPU time.Duration // CPU over the steady window
	steady    time.Duration // the window's length, as measured
	scrape    scrapes       // the metrics-server-like scrapes in the window
	mem       memory        // resident memory at the window's end
	toRunning time.Duration // process start to every pod's container running
	teardown  time.Duration // manifests removed to no pod container running
	relist    time.Duration // mean PLEG relist over the steady window (0: unknown)
	// relistAll is the mean PLEG relist over the whole run, from the
	// agent's start to the end of teardown, and relistMax an upper bound
	// of its longest relist (the histogram's smallest bucket bound above
	// every relist), in seconds; 0: unknown.
	relistAll time.Duration
	relistMax float64
	unhealthy int     // log lines saying the PLEG is not healthy
	startup   startup // per-pod start-up
	// slotWait is nodekit's wait for a start slot until every pod ran
	// (empty for the kubelet, or without --max-parallel-starts).
	slotWait slotWaits
	// resident is the binary's resident pages at the window's end, by
	// section and module (nil when they could not be read).
	resident *residentPages
}

func (m measurement) String() string {
	return fmt.Sprintf("start CPU %.2fs, steady CPU %.1f mcores, RSS %.1f MiB (peak %.1f, anonymous %.1f, file-backed %.1f), all Running after %.2fs, teardown %.2fs, "+
		"mean relist %.1fms (whole run %.1fms, max <= %gs), PLEG-unhealthy log lines %d, start-up per pod %v, in the runtime %v, the rest %v, the agent's own %s, start slot waits %v, "+
		"/metrics/resource scrapes %d (failed %d, mean %.1fms, %d pods)",
		m.startCPU.Seconds(), m.millicores(), mib(m.mem.rss), mib(m.mem.hwm), mib(m.mem.anon), mib(m.mem.file), m.toRunning.Seconds(), m.teardown.Seconds(), ms(m.relist),
		ms(m.relistAll), m.relistMax, m.unhealthy, m.startup.total, m.startup.cri, m.startup.agent, m.startup.ownString(), m.slotWait,
		m.scrape.n, m.scrape.failed, ms(m.scrape.mean()), m.scrape.pods)
}

// millicores is the steady CPU as thousandths of a core.
func (m measurement) millicores() float64 {
	return 1000 * m.steadyCPU.Seconds() / m.steady.Seconds()
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// measure runs agent a with n static pods on a clean runtime and measures
// it; the runtime is cleaned again afterwards.
func measure(ctx context.Context, rt *runtime, a agent, n int, o options) (measurement, error) {
	var m measurement
	if err := rt.clean(ctx); err != nil {
		return m, err
	}
	dir, err := os.MkdirTemp(o.work, a.name+"-")
	if err != nil {
		return m, err
	}
	defer removeDir(dir)
	// The log outlives the run's directory, for the PLEG grep and a look
	// afterwards.
	logPath := filepath.Join(o.work, fmt.Sprintf("%s-%d-pods-%s.log", a.name, n, time.Now().Format("150405")))
	manifests := filepath.Join(dir, "manifests")
	if err := writeManifests(manifests, n, o.image); err != nil {
		return m, err
	}
	// Read before the agent starts, so the parse does not compete with it.
	info, infoErr := readBinary(a.binary)
	if infoErr != nil {
		logf("%s: no resident pages by module: %v", a.name, infoErr)
	}
	cmd, urls, err := a.command(dir, manifests, n)
	if err != nil {
		return m, err
	}
	metrics := urls.metrics
	if o.dropBinaryCache {
		if err := dropPageCache(a.binary); err != nil {
			return m, err
		}
		if cached, _, err := cachedPages(a.binary); err == nil && cached > 0 {
			logf("%s: %d pages of %s still in the page cache after the drop", a.name, cached, a.binary)
		}
	}
	p, err := startProcess(cmd, logPath)
	if err != nil {
		return m, err
	}
	defer func() {
		p.stop()
		_ = rt.clean(context.WithoutCancel(ctx))
	}()
	seenRunning := runningTracker{}
	if err := p.waitFor(ctx, o.timeout, func() (bool, error) {
		names, err := rt.running(ctx)
		seenRunning.note(names, time.Now())
		return len(names) == n, err
	}); err != nil {
		return m, fmt.Errorf("waiting for %d pods to run: %w (log: %s)", n, err, p.tail())
	}
	m.toRunning = time.Since(p.started)
	if m.startCPU, err = cpuOf(p.pid()); err != nil {
		return m, err
	}
	if a.name == "nodekit" {
		if m.slotWait, err = scrapeSlotWaits(ctx, metrics); err != nil {
			logf("%s: no start slot waits: %v", a.name, err)
		}
	}
	windowStart := time.Now()
	before, errBefore := scrapeRelist(ctx, metrics)
	// metrics-server's scrape runs beside the window and is waited for
	// before the window's CPU is read, so a slow last scrape is in it.
	scrapeCtx, stopScrapes := context.WithCancel(ctx)
	scraped := make(chan scrapes, 1)
	go func() { scraped <- scrapeEvery(scrapeCtx, urls.resource, o.scrapeEvery, o.steady) }()
	idleErr := p.idle(ctx, o.steady)
	if idleErr != nil {
		stopScrapes()
	}
	m.scrape = <-scraped
	stopScrapes()
	if idleErr != nil {
		return m, fmt.Errorf("steady window: %w (log: %s)", idleErr, p.tail())
	}
	if err := m.scrape.err(); err != nil {
		logf("%s: %v", a.name, err)
	}
	after, errAfter := scrapeRelist(ctx, metrics)
	if err := errors.Join(errBefore, errAfter); err != nil {
		logf("%s: no relist duration: %v", a.name, err)
	} else {
		m.relist = meanRelist(before, after)
	}
	end, err := cpuOf(p.pid())
	if err != nil {
		return m, err
	}
	m.steadyCPU, m.steady = end-m.startCPU, time.Since(windowStart)
	if m.mem, err = memoryOf(p.pid()); err != nil {
		return m, err
	}
	if info != nil {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.pid()))
		if err == nil {
			var r residentPages
			if r, err = residentOf(p.pid(), exe, info); err == nil {
				m.resident = &r
			}
		}
		if err != nil {
			logf("%s: no resident pages by module: %v", a.name, err)
		}
	}
	if o.dropBinaryCache {
		// Every page of the binary in the page cache now was read for
		// this process (a check that readahead is off: then about its
		// file-backed RSS).
		if cached, total, err := cachedPages(a.binary); err != nil {
			logf("%s: pages of %s in the page cache: %v", a.name, a.binary, err)
		} else {
			logf("%s: %.1f MiB of %s's %.1f MiB in the page cache at the window's end (file-backed RSS %.1f MiB)",
				a.name, mib(uint64(cached*os.Getpagesize())), a.binary, mib(uint64(total*os.Getpagesize())), mib(m.mem.file))
		}
	}
	if m.startup, err = measureStartup(ctx, rt, seenRunning, p.started, sandboxWaits(a.name, logPath, m.slotWait)); err != nil {
		return m, err
	}
	if err := os.RemoveAll(manifests); err != nil {
		return m, err
	}
	if err := os.Mkdir(manifests, 0o755); err != nil {
		return m, err
	}
	del := time.Now()
	if err := p.waitFor(ctx, o.timeout, func() (bool, error) { names, err := rt.running(ctx); return len(names) == 0, err }); err != nil {
		return m, fmt.Errorf("waiting for the pods to stop: %w (log: %s)", err, p.tail())
	}
	m.teardown = time.Since(del)
	if all, err := scrapeRelist(ctx, metrics); err != nil {
		logf("%s: no relist duration at the end: %v", a.name, err)
	} else {
		m.relistAll, m.relistMax = meanRelist(relistTotals{}, all), all.maxBound()
	}
	// The kubelet says "PLEG is not healthy: pleg has yet to be
	// successful" until its first relist, at every start: not counted.
	if m.unhealthy, err = countLines(logPath, []string{"pleg is not healthy", "last seen active"}, "has yet to be successful"); err != nil {
		return m, err
	}
	return m, nil
}

// writeManifests writes n static pods, each one busybox container that
// exits at once on SIGTERM (so teardown measures the agent, not a grace
// period).
func writeManifests(dir string, n int, image string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: pb-%d
  namespace: default
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: main
    image: %s
    imagePullPolicy: Never
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 36000 & wait"]
`, i, image)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("pb-%d.yaml", i)), []byte(pod), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// removeDir unmounts what the agent left mounted below dir and removes it.
func removeDir(dir string) {
	b, _ := os.ReadFile("/proc/self/mounts")
	var below []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
			below = append(below, f[1])
		}
	}
	for i := len(below) - 1; i >= 0; i-- {
		_ = syscall.Unmount(below[i], syscall.MNT_DETACH)
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		logf("cannot remove %s: %v", dir, err)
	}
}

// process is a started agent.
type process struct {
	cmd     *exec.Cmd
	log     string
	started time.Time
	done    chan struct{}
	err     error
}

func startProcess(cmd *exec.Cmd, logPath string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	p := &process{cmd: cmd, log: logPath, done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// waitFor polls cond every 100 ms until it holds, the process exits or
// timeout passes.
func (p *process) waitFor(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("not after %v: %w", timeout, err)
			}
			return fmt.Errorf("not after %v", timeout)
		}
		if err := p.idle(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// idle waits d, failing when the process exits or ctx ends first.
func (p *process) idle(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-p.done:
		return fmt.Errorf("the agent exited: %v", p.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop sends SIGTERM, and SIGKILL after 30 s.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// countLines counts the lines of the file at path that hold any of subs,
// ignoring case, and not except.
func countLines(path string, subs []string, except string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(strings.ToLower(string(b)), "\n") {
		for _, s := range subs {
			if strings.Contains(line, s) && !strings.Contains(line, except) {
				n++
				break
			}
		}
	}
	return n, nil
}

// sandboxWaits is each pod's wait for a start slot before its sandbox, by
// name: none for the kubelet or an agent that waited for no slot, and from
// nodekit's --v=2 log lines otherwise; nil (unknown) when those are not
// logged.
func sandboxWaits(agent, logPath string, w slotWaits) map[string]time.Duration {
	if w[opSandbox].sum == 0 {
		return map[string]time.Duration{}
	}
	waits, err := sandboxWaitsOf(logPath)
	if err == nil && len(waits) == 0 {
		err = fmt.Errorf("no %s line: run it with --nodekit-flags --v=2", waitedMessage)
	}
	if err != nil {
		logf("%s: no per-pod start slot waits, so no per-pod own start-up: %v", agent, err)
		return nil
	}
	return waits
}

// tail returns the last lines of the agent's log.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}
