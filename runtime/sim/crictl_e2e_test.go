//go:build e2e

package sim

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// envFile is where hack/containerd-up.sh records the test tools.
const envFile = "/var/lib/nodekit-test/env"

// crictlPath returns the crictl binary from NODEKIT_CRICTL or envFile. When
// there is none the test fails under CI=true and is skipped otherwise.
func crictlPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("NODEKIT_CRICTL")
	if path == "" {
		path = envFileValue(envFile, "NODEKIT_CRICTL")
	}
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	msg := "crictl not found: set NODEKIT_CRICTL or run hack/containerd-up.sh (which builds it into " + envFile + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// envFileValue reads key from a file of "export K=V" lines; "" if absent.
func envFileValue(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		if k, v, ok := strings.Cut(line, "="); ok && k == key {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

func TestCrictlListsTheSimulatedPodsAndContainers(t *testing.T) {
	crictl := crictlPath(t)
	e := newEnv(t, Config{})
	srv := e.serve()
	rs, ctx, sock := srv.rs, e.ctx, srv.sock
	sb, err := rs.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "simweb", Namespace: "default", Uid: "sim-uid-1"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := rs.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "simhttpd"},
		Image:    &runtimeapi.ImageSpec{Image: "localhost/nodekit/busybox:1"},
		Labels:   map[string]string{"io.kubernetes.pod.name": "simweb", "io.kubernetes.pod.namespace": "default"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}

	config := filepath.Join(t.TempDir(), "crictl.yaml")
	if err := os.WriteFile(config, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"--config", config, "--runtime-endpoint", "unix://" + sock, "--image-endpoint", "unix://" + sock, "--timeout", "10s"}, args...)
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		defer ccancel()
		out, err := exec.CommandContext(cctx, crictl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("crictl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("pods"); !strings.Contains(out, "simweb") || !strings.Contains(out, sb[:13]) || !strings.Contains(out, "Ready") {
		t.Fatalf("crictl pods does not list the sandbox:\n%s", out)
	}
	if out := run("ps", "-a"); !strings.Contains(out, "simhttpd") || !strings.Contains(out, id[:13]) || !strings.Contains(out, "Running") {
		t.Fatalf("crictl ps -a does not list the container:\n%s", out)
	}
	if out := run("version"); !strings.Contains(out, "RuntimeName:  sim") {
		t.Fatalf("crictl version does not say sim:\n%s", out)
	}
}
