//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Issue 13, acceptance 1: kubectl logs through the API server and the
// agent's secure port.
func TestNodeAPIKubectlLogs(t *testing.T) {
	h, c, ns := joinedAgent(t)
	startAPIPod(t, c, h.shPod(ns, "counter", `i=0; trap 'exit 0' TERM; while true; do echo line-$i; echo err-$i >&2; i=$((i+1)); sleep 0.2; done`))

	all := c.eventually(t, "20 lines", func(s string) bool { return len(nonEmptyLines(s)) >= 40 }, "-n", ns, "logs", "counter")
	if !strings.Contains(all, "line-0\n") || !strings.Contains(all, "err-0\n") {
		t.Fatalf("logs miss the first lines of stdout and stderr:\n%s", all)
	}

	if got := nonEmptyLines(c.mustRun(t, "", "-n", ns, "logs", "counter", "--tail=3")); len(got) != 3 {
		t.Errorf("--tail=3 gave %d lines: %q", len(got), got)
	}

	stamped := nonEmptyLines(c.mustRun(t, "", "-n", ns, "logs", "counter", "--tail=2", "--timestamps"))
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(Z|[+-]\d\d:\d\d) (line|err)-\d+$`)
	if len(stamped) != 2 || !stamp.MatchString(stamped[0]) || !stamp.MatchString(stamped[1]) {
		t.Errorf("--timestamps lines are not RFC 3339 timestamp + line: %q", stamped)
	}

	since := nonEmptyLines(c.mustRun(t, "", "-n", ns, "logs", "counter", "--since=1s"))
	total := nonEmptyLines(c.mustRun(t, "", "-n", ns, "logs", "counter"))
	if len(since) == 0 || len(since) >= len(total)-10 {
		t.Errorf("--since=1s gave %d of %d lines; want a few (about 10)", len(since), len(total))
	}

	// -f: new lines keep coming after the ones that were there.
	f := c.start(t, nil, "-n", ns, "logs", "counter", "-f", "--tail=1")
	first := lineNumber(t, f.next(t, 30*time.Second))
	seen := first
	for seen < first+10 {
		if n, ok := lineNumberOK(f.next(t, 30*time.Second)); ok {
			if n < seen {
				t.Fatalf("-f went back from line %d to %d", seen, n)
			}
			seen = n
		}
	}
}

// Issue 13, acceptance 1: --previous after a restart.
func TestNodeAPIKubectlLogsPrevious(t *testing.T) {
	h, c, ns := joinedAgent(t)
	createAPIPod(t, c, h.shPod(ns, "restarter", `echo run-$(cat /proc/sys/kernel/random/uuid); sleep 2; exit 1`))
	waitAPIPod(t, c, ns, "restarter", 2*time.Minute, "restarted once", func(p *corev1.Pod, err error) bool {
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1 &&
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated != nil
	})
	prev := strings.TrimSpace(c.mustRun(t, "", "-n", ns, "logs", "restarter", "--previous"))
	if !strings.HasPrefix(prev, "run-") {
		t.Fatalf("--previous = %q, want the previous run's line", prev)
	}
	cur := c.eventually(t, "the current run's line", func(s string) bool { return strings.HasPrefix(s, "run-") },
		"-n", ns, "logs", "restarter")
	if strings.TrimSpace(cur) == prev {
		t.Errorf("--previous shows the current run %q", prev)
	}
}

// Issue 13, acceptance 2: exec with stdin, -it with a terminal size, attach,
// cp both ways, port-forward to a pod on the pod network.
func TestNodeAPIKubectlExecAttachCpPortForward(t *testing.T) {
	h, c, ns := joinedAgent(t)
	startAPIPod(t, c, h.apiPod(ns, "box", 0))

	t.Run("exec with stdin", func(t *testing.T) {
		if out := c.mustRun(t, "x\n", "-n", ns, "exec", "-i", "box", "--", "cat"); out != "x\n" {
			t.Errorf("echo x | kubectl exec -i -- cat = %q, want \"x\\n\"", out)
		}
	})
	t.Run("exec exit code", func(t *testing.T) {
		_, err := c.run(t, "", "-n", ns, "exec", "box", "--", "sh", "-c", "exit 3")
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
			t.Errorf("exit 3 in the container gave %v, want exit code 3", err)
		}
	})
	t.Run("exec -it with a terminal size", func(t *testing.T) {
		// script gives kubectl a pty; kubectl sends its size on the resize
		// stream, which may land just after the command starts: it polls.
		poll := `for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do s=$(stty size 2>&1); [ "$s" = "33 101" ] && break; sleep 0.25; done; echo "size $s"`
		cmdline := fmt.Sprintf("stty rows 33 cols 101; %s --kubeconfig %s -n %s exec -it box -- sh -c '%s'", c.kubectl, c.adminKubeconfig, ns, poll)
		out, err := exec.Command("script", "-qec", cmdline, "/dev/null").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "size 33 101") {
			t.Errorf("exec -it stty size = %q (err %v), want \"size 33 101\"", out, err)
		}
	})
	t.Run("cp both ways", func(t *testing.T) {
		dir := t.TempDir()
		src := filepath.Join(dir, "in.txt")
		want := strings.Repeat("nodekit cp\n", 1000)
		if err := os.WriteFile(src, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		c.mustRun(t, "", "cp", src, ns+"/box:/tmp/in.txt")
		if out := c.mustRun(t, "", "-n", ns, "exec", "box", "--", "wc", "-c", "/tmp/in.txt"); !strings.HasPrefix(strings.TrimSpace(out), strconv.Itoa(len(want))) {
			t.Errorf("in the container: wc -c = %q, want %d", out, len(want))
		}
		back := filepath.Join(dir, "back.txt")
		c.mustRun(t, "", "cp", ns+"/box:/tmp/in.txt", back)
		if got, err := os.ReadFile(back); err != nil || string(got) != want {
			t.Errorf("copied back %d bytes (err %v), want the %d sent", len(got), err, len(want))
		}
	})
	t.Run("attach", func(t *testing.T) {
		p := h.shPod(ns, "reader", `while read l; do echo got-$l; done`)
		p.Spec.Containers[0].Stdin = true
		startAPIPod(t, c, p)
		// An os.Pipe buffers, so writes never block on kubectl.
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pr.Close(); pw.Close() })
		a := c.start(t, pr, "-n", ns, "attach", "-i", "reader")
		deadline := time.Now().Add(time.Minute)
		for {
			// kubectl attach connects asynchronously: resend until a line comes.
			_, _ = io.WriteString(pw, "hello\n")
			select {
			case l, ok := <-a.lines:
				if !ok {
					t.Fatalf("kubectl attach ended")
				}
				if strings.Contains(l, "got-hello") {
					return
				}
			case <-time.After(2 * time.Second):
			}
			if time.Now().After(deadline) {
				t.Fatalf("attach: no echo from the container within 1m")
			}
		}
	})
	t.Run("port-forward to a pod-network server", func(t *testing.T) {
		p := h.shPod(ns, "web", `mkdir -p /www && echo pf-ok > /www/index.html && exec httpd -f -p 8080 -h /www`)
		startAPIPod(t, c, p)
		local := freePort(t)
		pf := c.start(t, nil, "-n", ns, "port-forward", "pod/web", fmt.Sprintf("%d:8080", local))
		pf.next(t, time.Minute) // "Forwarding from 127.0.0.1:PORT -> 8080"
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", local))
		if err != nil {
			t.Fatalf("GET through port-forward: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "pf-ok" {
			t.Errorf("through port-forward: %d %q, want 200 pf-ok", resp.StatusCode, body)
		}
	})
}

// lineNumber parses "line-N" or "err-N".
func lineNumber(t *testing.T, l string) int {
	t.Helper()
	n, ok := lineNumberOK(l)
	if !ok {
		t.Fatalf("unexpected log line %q", l)
	}
	return n
}

func lineNumberOK(l string) (int, bool) {
	_, num, ok := strings.Cut(l, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil
}
