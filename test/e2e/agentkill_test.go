//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// buildAgent builds the nodekit binary as hack/ builds it (go build -tags
// grpcnotrace ./cmd/nodekit: hack/lib.sh's NODEKIT_BUILD_TAGS) into a
// temporary directory and returns its path.
func buildAgent(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "nodekit")
	cmd := exec.Command("go", "build", "-tags", "grpcnotrace", "-o", bin, "./cmd/nodekit")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/nodekit: %v\n%s", err, b)
	}
	return bin
}

// agentProcess runs the nodekit binary as a child process for the
// harness's node (its manifests, root dir and instance), logging to a file.
type agentProcess struct {
	t   *testing.T
	bin string
	h   *agentHarness
	cmd *exec.Cmd
	log string
	n   int // starts so far
}

// start runs the binary on a free port and waits until it serves /healthz.
func (p *agentProcess) start() {
	p.t.Helper()
	p.h.port = freePort(p.t)
	p.n++
	f, err := os.OpenFile(p.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "=== start %d\n", p.n)
	p.cmd = exec.Command(p.bin, "run",
		"--runtime-endpoint", p.h.env.Endpoint, "--node-name", p.h.node, "--node-ip", "127.0.0.1",
		"--manifests", p.h.manifests, "--root-dir", p.h.rootDir,
		"--pod-logs-dir", filepath.Join(p.h.rootDir, "logs"), "--container-logs-dir", p.h.logLinks, "--cgroup-root", p.h.env.CgroupParent,
		"--port", strconv.Itoa(p.h.port), "--secure-port", "0", "-v", "2")
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start nodekit: %v", err)
	}
	within(p.t, time.Minute, "the agent to serve /healthz", func() bool { return p.h.healthz("syncloop") == 200 })
}

// kill sends SIGKILL and reaps the process.
func (p *agentProcess) kill() {
	p.t.Helper()
	if p.cmd == nil {
		return
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("SIGKILL nodekit: %v", err)
	}
	_ = p.cmd.Wait()
	p.cmd = nil
}

// TestAgentSIGKILLDuringStartupAndAfterLosesNoContainer runs the nodekit
// binary with six static pods, SIGKILLs it while it starts them and three
// times once they run, restarting it each time: every pod ends with one
// ready sandbox and one running container (a sandbox the dead agent was
// still creating is replaced, as the kubelet replaces it), none that ran is lost, duplicated or
// restarted (a container the dead agent had only created may be replaced
// by a new attempt, as the kubelet replaces it), and the kills after
// start-up change nothing at all. It needs
// only the shared containerd: it disrupts nothing but its own agent.
func TestAgentSIGKILLDuringStartupAndAfterLosesNoContainer(t *testing.T) {
	h := newAgentHarness(t)
	bin := buildAgent(t)
	p := &agentProcess{t: t, bin: bin, h: h, log: filepath.Join(t.TempDir(), "nodekit.log")}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("nodekit log:\n%s", b)
		}
	})
	names := writeSleepers(h, "kill", 6)
	rs := h.env.runtime(t)

	p.start()
	within(t, 2*time.Minute, "the first sandbox", func() bool { return countSandboxes(t, h) > 0 })
	p.kill()
	atKill := snapshot(t, rs, h.node)
	t.Logf("killed during start-up with %s", atKill)
	p.start()
	allRunning(h, names, 2*time.Minute)
	before := snapshot(t, rs, h.node)
	survivors(t, atKill, before, len(names))
	restarts := h.restartCounts()
	stays(t, h, rs, 5*time.Second, before, restarts)

	for i := range 3 {
		p.kill()
		p.start()
		allRunning(h, names, time.Minute)
		stays(t, h, rs, 5*time.Second, before, restarts)
		t.Logf("kill %d after start-up: nothing changed", i+1)
	}
}

// countSandboxes counts the sandboxes of the harness's instance.
func countSandboxes(t *testing.T, h *agentHarness) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sbs, err := h.env.runtime(t).ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{noderuntime.LabelInstance: h.node}})
	if err != nil {
		t.Fatalf("list sandboxes: %v", err)
	}
	return len(sbs)
}
