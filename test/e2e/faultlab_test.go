//go:build e2e

package e2e

import (
	"context"
	"fmt"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// faultLabEnv names the directory (the NODEKIT_TEST_DIR) of a containerd
// that fault tests may kill, stop and restart: a second lab brought up only
// for them, never the shared one. hack/test.sh brings it up; by hand:
//
//	NODEKIT_TEST_DIR=/var/lib/nodekit-lab-fault CNI_NETWORK=nodekit-fault \
//	CNI_BRIDGE=nkfault0 CNI_SUBNET=10.247.0.0/24 CGROUP_PARENT=nodekit-fault \
//	bash hack/containerd-up.sh
//	export NODEKIT_FAULT_CONTAINERD_DIR=/var/lib/nodekit-lab-fault
const faultLabEnv = "NODEKIT_FAULT_CONTAINERD_DIR"

// faultLab is the disruptable containerd and a connection to it.
type faultLab struct {
	testEnv
	dir string
}

// loadFaultLab finds the disruptable containerd. Without one the test is
// skipped, or fails under CI=true; a directory that is the shared lab's
// fails the test: it must never be disrupted.
func loadFaultLab(t *testing.T) faultLab {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	dir := os.Getenv(faultLabEnv)
	if dir == "" {
		fail("%s is not set: fault tests kill and stop containerd and need a lab of their own (see faultLabEnv)", faultLabEnv)
	}
	dir = filepath.Clean(dir)
	vars, err := readEnvFile(filepath.Join(dir, "env"))
	if err != nil {
		fail("disruptable containerd in %s: %v", dir, err)
	}
	if shared, err := envVars(); dir == filepath.Dir(envFile) || (err == nil && shared["NODEKIT_CRI_ENDPOINT"] == vars["NODEKIT_CRI_ENDPOINT"]) {
		t.Fatalf("%s=%s is the shared lab's containerd: fault tests must never disrupt it", faultLabEnv, dir)
	}
	env, err := connectVars(vars)
	if err != nil {
		fail("disruptable containerd in %s: %v", dir, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = env.conn.rs.Close(ctx)
		_ = env.conn.is.Close(ctx)
	})
	lab := faultLab{testEnv: env, dir: dir}
	lab.pid(t) // it must be ours
	return lab
}

// pid returns the lab's containerd pid, checking that the process runs
// this lab's config file.
func (l faultLab) pid(t *testing.T) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(l.dir, "containerd.pid"))
	if err != nil {
		t.Fatalf("disruptable containerd: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("pid file of %s: %v", l.dir, err)
	}
	args := procList(t, fmt.Sprintf("/proc/%d/cmdline", pid))
	config := filepath.Join(l.dir, "config.toml")
	if !slices.Contains(args, config) && !slices.Contains(args, "--config="+config) {
		t.Fatalf("pid %d (%v) does not run %s: refusing to signal it", pid, args, config)
	}
	return pid
}

// kill ends the lab's containerd with sig (its shims and containers live
// on) and waits until it is gone; it returns a function that starts it
// again exactly as it ran (same binary, arguments, environment, log and
// pid file) and waits until CRI answers.
func (l faultLab) kill(t *testing.T, sig syscall.Signal) (restart func()) {
	t.Helper()
	pid := l.pid(t)
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Fatal(err)
	}
	args := procList(t, fmt.Sprintf("/proc/%d/cmdline", pid))
	env := procList(t, fmt.Sprintf("/proc/%d/environ", pid))
	start := time.Now()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal containerd (pid %d): %v", pid, err)
	}
	for _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil; _, err = os.Stat(fmt.Sprintf("/proc/%d", pid)) {
		if time.Since(start) > 20*time.Second {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() {
		t.Helper()
		logFile, err := os.OpenFile(filepath.Join(l.dir, "containerd.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer logFile.Close()
		cmd := exec.Command(exe, args[1:]...)
		cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, "/", logFile, logFile
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start containerd again: %v", err)
		}
		if err := os.WriteFile(filepath.Join(l.dir, "containerd.pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			t.Errorf("write pid file: %v", err)
		}
		go func() { _ = cmd.Wait() }() // reap it should it exit while the tests run
		l.waitCRI(t, start)
		t.Logf("containerd restarted (pid %d -> %d); CRI answered %v after the signal", pid, cmd.Process.Pid, time.Since(start).Round(time.Millisecond))
	}
}

// waitCRI waits until the lab's CRI answers Version.
func (l faultLab) waitCRI(t *testing.T, since time.Time) {
	t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := l.runtime(t).Version(ctx, "v1")
		cancel()
		if err == nil {
			return
		}
		if time.Since(since) > time.Minute {
			t.Fatalf("containerd does not answer a minute on: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop SIGSTOPs the lab's containerd; it returns the SIGCONT, which the
// test's cleanup also sends (before the harness's cleanup talks to CRI).
func (l faultLab) stop(t *testing.T) (cont func()) {
	t.Helper()
	pid := l.pid(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP containerd (pid %d): %v", pid, err)
	}
	cont = func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(cont)
	return cont
}

// healthz returns the status code of the agent's /healthz or
// /healthz/<check>; 0 when the server does not answer.
func (h *agentHarness) healthz(check string) int {
	path := "/healthz"
	if check != "" {
		path += "/" + check
	}
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d%s", h.port, path))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// nodeReadyStatus returns the node's Ready condition status ("" when unknown).
func nodeReadyStatus(c clusterEnv, node string) corev1.ConditionStatus {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := c.admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status
		}
	}
	return ""
}

// within polls cond every 100ms until it holds and returns how long that
// took, failing the test after limit.
func within(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}
