//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit"
)

// startWith runs the agent like start, with its configuration changed by
// mutate first.
func (h *agentHarness) startWith(mutate func(*nodekit.Config)) {
	h.t.Helper()
	h.port = freePort(h.t)
	log := funcr.New(func(prefix, args string) {
		h.logs.WriteString(time.Now().Format("15:04:05.000") + " " + prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 4})
	cfg := h.config()
	mutate(&cfg)
	h.app = nodekit.New(cfg, log, nodekit.Defaults())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.app.Start(ctx); err != nil {
		h.t.Fatalf("start agent: %v", err)
	}
}

// execOut runs cmd in a running container of pod through the CRI and
// returns its output; a non-zero exit is an error.
func (h *agentHarness) execOut(pod *corev1.Pod, container string, cmd ...string) (string, error) {
	h.t.Helper()
	st := statusOf(pod, container)
	if st == nil || st.ContainerID == "" {
		h.t.Fatalf("container %s of %s has no ID: %s", container, pod.Name, describe(pod))
	}
	_, id, _ := strings.Cut(st.ContainerID, "://")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stdout, stderr, err := h.env.runtime(h.t).ExecSync(ctx, id, cmd, 10*time.Second)
	if err != nil {
		return string(stdout) + string(stderr), err
	}
	return strings.TrimSpace(string(stdout)), nil
}

// mustExec is execOut that fails the test on error.
func (h *agentHarness) mustExec(pod *corev1.Pod, container string, cmd ...string) string {
	h.t.Helper()
	out, err := h.execOut(pod, container, cmd...)
	if err != nil {
		h.t.Fatalf("exec %v in %s: %v (%s)", cmd, container, err, out)
	}
	return out
}

// cgroupFile reads a cgroup v1 file of a cgroupfs path, trimmed.
func cgroupFile(controller, cgroup, file string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", controller, cgroup, file))
	return strings.TrimSpace(string(b)), err
}

// capabilityBits parses the Cap* line of /proc/<pid>/status text.
func capabilityBits(status, line string) (uint64, bool) {
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), line+":"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// memTotal is the machine's MemTotal in bytes (0 when unreadable).
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// registryEnv is what hack/registry-up.sh wrote: the loopback registries
// and the credentials of the one with authentication.
type registryEnv struct {
	open, auth, user, password, image string
}

// registryEnvFile is where hack/registry-up.sh writes its env.
var registryEnvFile = labFile("registry/env")

// loadRegistry finds the loopback registries; like loadEnv, it fails under
// CI=true and skips otherwise when there are none.
func loadRegistry(h *agentHarness) registryEnv {
	h.t.Helper()
	vars, _ := readEnvFile(registryEnvFile)
	get := func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return vars[k]
	}
	r := registryEnv{open: get("NODEKIT_REGISTRY"), auth: get("NODEKIT_AUTH_REGISTRY"), user: get("NODEKIT_REGISTRY_USER"),
		password: get("NODEKIT_REGISTRY_PASSWORD"), image: get("NODEKIT_REGISTRY_IMAGE")}
	if r.open == "" || r.image == "" {
		msg := "no loopback registry: run hack/registry-up.sh (it writes " + registryEnvFile + ")"
		if os.Getenv("CI") == "true" {
			h.t.Fatal(msg)
		}
		h.t.Skip(msg)
	}
	return r
}
