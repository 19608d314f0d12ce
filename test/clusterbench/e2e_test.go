//go:build e2e

package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be its own agents child, as the command
// is: nodekit mode runs os.Executable() agents ...
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "agents" {
		if err := runAgents(os.Args[2:]); err != nil {
			os.Stderr.WriteString("agents: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// labOptions finds the control plane as the e2e harness does: the
// environment, else the env file hack/control-plane-up.sh wrote. It skips
// without one, and fails under CI=true.
func labOptions(t *testing.T) options {
	t.Helper()
	dir := os.Getenv("NODEKIT_TEST_DIR")
	if dir == "" {
		dir = "/var/lib/nodekit-test"
	}
	vars := map[string]string{}
	if f, err := os.Open(filepath.Join(dir, "control-plane", "env")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "="); ok {
				vars[k] = v
			}
		}
		f.Close()
	}
	get := func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return vars[k]
	}
	o := options{nodes: 3, podsPerNode: 3, kubeconfig: get("NODEKIT_KUBECONFIG"), caCert: get("NODEKIT_KUBE_CA_FILE"),
		work: t.TempDir(), timeout: 3 * time.Minute, teardown: true}
	if o.kubeconfig == "" || o.caCert == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no control plane in %s: run hack/control-plane-up.sh", dir)
		}
		t.Skipf("no control plane in %s: run hack/control-plane-up.sh", dir)
	}
	o.caKey = filepath.Join(filepath.Dir(o.caCert), "ca.key")
	host, err := restConfigHost(o.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	o.server = host
	return o
}

func checkResult(t *testing.T, r result, o options) {
	t.Helper()
	t.Logf("%s", r)
	if r.nodesReady <= 0 || r.toRunning <= 0 || r.teardown <= 0 {
		t.Errorf("%s: phases not timed: %+v", r.mode, r)
	}
	if r.agentRequests() < float64(o.nodes) {
		t.Errorf("%s: %v API requests for %d nodes, want at least one per node", r.mode, r.agentRequests(), o.nodes)
	}
	if r.proc.cpu <= 0 || r.proc.maxRSS == 0 {
		t.Errorf("%s: the process's usage was not measured: %+v", r.mode, r.proc)
	}
}

func TestNodekitAgentsJoinRunPodsAndTearDown(t *testing.T) {
	o := labOptions(t)
	c, err := newCluster(o.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := measure(ctx, c, nodekitMode(o), o)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, r, o)
}

func TestKwokNodesRunPodsAndTearDown(t *testing.T) {
	o := labOptions(t)
	cacheDir := os.Getenv("NODEKIT_CACHE")
	if cacheDir == "" {
		cacheDir = "/var/cache/nodekit"
	}
	o.kwok = filepath.Join(cacheDir, "bin", "kwok-0.8.0", "kwok")
	if _, err := os.Stat(o.kwok); err != nil {
		t.Skipf("no kwok at %s: build it with hack/build-kwok.sh", o.kwok)
	}
	c, err := newCluster(o.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := measure(ctx, c, kwokMode(o), o)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, r, o)
}
