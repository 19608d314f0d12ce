//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// joinedAgent starts an agent joined to the control plane on its node
// credentials and returns it, the cluster and its namespace. It skips (or
// fails under CI) without a control plane or its kubectl.
func joinedAgent(t *testing.T) (*agentHarness, clusterEnv, string) {
	t.Helper()
	c := loadCluster(t)
	if c.kubectl == "" {
		fail := t.Skipf
		if isCI() {
			fail = t.Fatalf
		}
		fail("no kubectl in the control-plane env (NODEKIT_KUBECTL): run hack/build-control-plane.sh and hack/control-plane-up.sh")
	}
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	return h, c, ns
}

// kubectl runs the cluster's kubectl as the admin with stdin and returns
// its combined output.
func (c clusterEnv) run(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.kubectl, append([]string{"--kubeconfig", c.adminKubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustRun is run that fails the test on an error.
func (c clusterEnv) mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := c.run(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// eventually retries kubectl until check accepts its output (the API server
// may need a moment to see a new pod running), failing at the deadline.
func (c clusterEnv) eventually(t *testing.T, what string, check func(string) bool, args ...string) string {
	t.Helper()
	var out string
	var err error
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		out, err = c.run(t, "", args...)
		if err == nil && check(out) {
			return out
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("kubectl %s: %s did not happen within 1m; last output (err %v):\n%s", strings.Join(args, " "), what, err, out)
	return ""
}

// startAPIPod creates pod through the API server and waits until it runs.
func startAPIPod(t *testing.T, c clusterEnv, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	createAPIPod(t, c, pod)
	return waitAPIPod(t, c, pod.Namespace, pod.Name, 2*time.Minute, "running", apiRunning)
}

// lineReader reads lines from a running command's stdout.
type lineReader struct {
	cmd   *exec.Cmd
	lines chan string
}

// startKubectl starts a long-running kubectl (logs -f, port-forward, attach)
// whose stdout is read line by line; the test's cleanup kills it.
func (c clusterEnv) start(t *testing.T, stdin io.Reader, args ...string) *lineReader {
	t.Helper()
	cmd := exec.Command(c.kubectl, append([]string{"--kubeconfig", c.adminKubeconfig}, args...)...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kubectl %s: %v", strings.Join(args, " "), err)
	}
	r := &lineReader{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("kubectl %s stderr:\n%s", strings.Join(args, " "), stderr.String())
		}
	})
	return r
}

// next returns the next line, failing the test if none comes in time.
func (r *lineReader) next(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			t.Fatalf("kubectl %v ended", r.cmd.Args)
		}
		return l
	case <-time.After(timeout):
		t.Fatalf("kubectl %v: no line within %s", r.cmd.Args, timeout)
	}
	return ""
}

// shPod is a pod bound to the harness's node running script in sh.
func (h *agentHarness) shPod(ns, name, script string) *corev1.Pod {
	p := h.apiPod(ns, name, 0)
	p.Spec.Containers[0].Command = []string{"sh", "-c", script}
	return p
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func isCI() bool { return os.Getenv("CI") == "true" }
