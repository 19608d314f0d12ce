//go:build e2e

package e2e

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/server"
)

// TestReadOnlyPortIsClosedWhenJoiningUnlessAskedFor is issue 13's
// acceptance 4, "the read-only port is closed when the agent joins a
// cluster unless asked for" (the kubelet's readOnlyPort defaults to 0): the
// real nodekit binary, joined with --kubeconfig on node credentials and
// started without --read-only-port, listens on its secure port and on no
// read-only port (neither 10255 nor any other port answering /pods); started
// again with --read-only-port, it serves /pods there.
func TestReadOnlyPortIsClosedWhenJoiningUnlessAskedFor(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	h.joinCluster(c)
	bin := buildAgent(t)

	secure := freePort(t)
	p := startJoinedAgent(t, bin, h, c, secure)
	ports := listeningPorts(t, p.Process.Pid)
	if slices.Contains(ports, server.DefaultPort) {
		t.Errorf("the joined agent started without --read-only-port listens on %d (ports %v)", server.DefaultPort, ports)
	}
	for _, port := range ports {
		if port == secure {
			continue
		}
		if code, _ := getPods(port); code == http.StatusOK {
			t.Errorf("the joined agent started without --read-only-port serves /pods over plain HTTP on port %d", port)
		}
	}
	t.Logf("without --read-only-port the agent listens on %v (secure port %d)", ports, secure)
	stopAgent(t, p)

	readOnly := freePort(t)
	p = startJoinedAgent(t, bin, h, c, secure, "--read-only-port", strconv.Itoa(readOnly))
	defer stopAgent(t, p)
	var body string
	within(t, time.Minute, "the read-only port to serve /pods", func() bool {
		var code int
		code, body = getPods(readOnly)
		return code == http.StatusOK
	})
	var list corev1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil || list.Kind != "PodList" {
		t.Errorf("/pods on the read-only port: %v %.200s, want a PodList", err, body)
	}
	if ports := listeningPorts(t, p.Process.Pid); !slices.Contains(ports, readOnly) {
		t.Errorf("with --read-only-port %d the agent listens on %v", readOnly, ports)
	}
}

// startAgentBinary starts the nodekit binary for the harness's node (its
// runtime, manifests, root dir and cgroup root, -v 2) with the extra
// flags, logging to a file the test's cleanup shows when it failed after
// ending the agent with stop.
func startAgentBinary(t *testing.T, bin string, h *agentHarness, stop func(*exec.Cmd), extra ...string) *exec.Cmd {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "nodekit.log")
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args := append([]string{"run", "--runtime-endpoint", h.env.Endpoint, "--node-name", h.node, "--node-ip", "127.0.0.1",
		"--manifests", h.manifests, "--root-dir", h.rootDir,
		"--pod-logs-dir", filepath.Join(h.rootDir, "logs"), "--container-logs-dir", h.logLinks, "--cgroup-root", h.env.CgroupParent, "-v", "2"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nodekit: %v", err)
	}
	t.Cleanup(func() {
		stop(cmd)
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("nodekit %v log:\n%s", extra, b)
		}
	})
	return cmd
}

// startJoinedAgent runs the nodekit binary for the harness's node, joined
// with its node credentials, on the secure port and the extra flags, and
// waits until the node is Ready and the secure port listens.
func startJoinedAgent(t *testing.T, bin string, h *agentHarness, c clusterEnv, secure int, extra ...string) *exec.Cmd {
	t.Helper()
	kill := func(cmd *exec.Cmd) {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	cmd := startAgentBinary(t, bin, h, kill, append([]string{"--kubeconfig", h.kubeconfig, "--secure-port", strconv.Itoa(secure),
		"--client-ca-file", c.caFile}, extra...)...)
	within(t, 2*time.Minute, "the node to be Ready and the secure port to listen", func() bool {
		return nodeReadyStatus(c, h.node) == corev1.ConditionTrue && slices.Contains(listeningPorts(t, cmd.Process.Pid), secure)
	})
	return cmd
}

// stopAgent stops the agent with SIGTERM and waits for it.
func stopAgent(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
	}
}

// getPods GETs http://127.0.0.1:port/pods.
func getPods(port int) (int, string) {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", port))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// listeningPorts are the TCP ports the process listens on: its socket file
// descriptors matched with the LISTEN sockets of /proc/PID/net/tcp{,6}.
func listeningPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			pb, err := hex.DecodeString(hexPort)
			if err != nil || len(pb) != 2 {
				continue
			}
			if port := int(pb[0])<<8 | int(pb[1]); !slices.Contains(ports, port) {
				ports = append(ports, port)
			}
		}
	}
	slices.Sort(ports)
	return ports
}
