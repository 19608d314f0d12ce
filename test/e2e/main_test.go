//go:build e2e

// Package e2e holds nodekit's end-to-end tests: they run against the private
// containerd that hack/containerd-up.sh starts, and find it through the
// environment (or the env file that script writes).
//
// Run them as root with: go test -tags e2e -race ./test/e2e/
// With CI=true a runtime that cannot be reached fails every test that needs
// it; otherwise those tests are skipped with the reason.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
)

// envFile is where hack/containerd-up.sh writes the test environment.
var envFile = labFile("env")

// labFile is the path of rel in the lab the hack scripts run in: the one
// under $NODEKIT_TEST_DIR, /var/lib/nodekit-test by default (hack/lib.sh).
func labFile(rel string) string {
	dir := os.Getenv("NODEKIT_TEST_DIR")
	if dir == "" {
		dir = "/var/lib/nodekit-test"
	}
	return filepath.Join(dir, rel)
}

// criTimeout bounds the connection and each CRI call (the kubelet's
// default runtime request timeout).
const criTimeout = 2 * time.Minute

// testEnv is the test environment: where the runtime is and what to run.
type testEnv struct {
	// Endpoint is the CRI endpoint (NODEKIT_CRI_ENDPOINT).
	Endpoint string
	// Image is a busybox image with sh, present in the runtime
	// (NODEKIT_TEST_IMAGE).
	Image string
	// CgroupParent is the cgroupfs parent for test pods (NODEKIT_CGROUP_PARENT).
	CgroupParent string
	// Crictl is the path of a crictl binary (NODEKIT_CRICTL).
	Crictl string

	conn *criConn
}

// criConn is the process-wide connection to the runtime.
type criConn struct {
	rs criapi.RuntimeService
	is criapi.ImageManagerService
}

// shared holds the environment, loaded once for all tests of the run.
var shared struct {
	once sync.Once
	env  testEnv
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if c := shared.env.conn; c != nil {
		ctx := context.Background()
		_ = c.rs.Close(ctx)
		_ = c.is.Close(ctx)
	}
	os.Exit(code)
}

// loadEnv returns the test environment with a live connection to the
// runtime. When the runtime cannot be reached the test fails under CI=true
// and is skipped otherwise.
func loadEnv(t testing.TB) testEnv {
	t.Helper()
	shared.once.Do(func() { shared.env, shared.err = connectEnv() })
	if shared.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("e2e: container runtime unavailable under CI: %v", shared.err)
		}
		t.Skipf("e2e: container runtime unavailable (run hack/containerd-up.sh as root): %v", shared.err)
	}
	return shared.env
}

// runtime returns the shared CRI runtime service.
func (e testEnv) runtime(t testing.TB) criapi.RuntimeService {
	t.Helper()
	if e.conn == nil {
		t.Fatal("e2e: testEnv has no connection; get it from loadEnv")
	}
	return e.conn.rs
}

// images returns the shared CRI image service.
func (e testEnv) images(t testing.TB) criapi.ImageManagerService {
	t.Helper()
	if e.conn == nil {
		t.Fatal("e2e: testEnv has no connection; get it from loadEnv")
	}
	return e.conn.is
}

// connectEnv reads the environment, connects to the runtime and checks that
// it answers and has the test image.
func connectEnv() (testEnv, error) {
	vars, err := envVars()
	if err != nil {
		return testEnv{}, err
	}
	return connectVars(vars)
}

// connectVars connects to the runtime the NODEKIT_* settings vars name and
// checks that it answers and has the test image.
func connectVars(vars map[string]string) (testEnv, error) {
	env := testEnv{
		Endpoint:     vars["NODEKIT_CRI_ENDPOINT"],
		Image:        vars["NODEKIT_TEST_IMAGE"],
		CgroupParent: vars["NODEKIT_CGROUP_PARENT"],
		Crictl:       vars["NODEKIT_CRICTL"],
	}
	if env.Image == "" {
		env.Image = "localhost/nodekit/busybox:1"
	}
	ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), logr.Discard()), criTimeout)
	defer cancel()
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().WithEndpoint(env.Endpoint).
		WithConnectionTimeout(criTimeout).WithTracerProvider(nil).Build(ctx)
	if err != nil {
		return testEnv{}, fmt.Errorf("connect to CRI runtime at %s: %w", env.Endpoint, err)
	}
	is, err := criclient.NewRemoteImageServiceBuilder().WithEndpoint(env.Endpoint).
		WithConnectionTimeout(criTimeout).WithTracerProvider(nil).Build(ctx)
	if err != nil {
		_ = rs.Close(ctx)
		return testEnv{}, fmt.Errorf("connect to CRI image service at %s: %w", env.Endpoint, err)
	}
	env.conn = &criConn{rs: rs, is: is}
	if _, err := rs.Version(ctx, "v1"); err != nil {
		return env, fmt.Errorf("CRI runtime at %s does not answer Version: %w", env.Endpoint, err)
	}
	img, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: env.Image}, false)
	if err != nil {
		return env, fmt.Errorf("image status of %s at %s: %w", env.Image, env.Endpoint, err)
	}
	if img.GetImage() == nil {
		return env, fmt.Errorf("test image %s is not present in the runtime at %s (hack/containerd-up.sh imports it)", env.Image, env.Endpoint)
	}
	return env, nil
}

// envVars returns the NODEKIT_* settings from the process environment, or
// from envFile when NODEKIT_CRI_ENDPOINT is not set.
func envVars() (map[string]string, error) {
	keys := []string{"NODEKIT_CRI_ENDPOINT", "NODEKIT_TEST_IMAGE", "NODEKIT_CGROUP_PARENT", "NODEKIT_CRICTL"}
	vars := map[string]string{}
	for _, k := range keys {
		vars[k] = os.Getenv(k)
	}
	if vars["NODEKIT_CRI_ENDPOINT"] != "" {
		return vars, nil
	}
	fromFile, err := readEnvFile(envFile)
	if err != nil {
		return nil, fmt.Errorf("NODEKIT_CRI_ENDPOINT is not set and %w", err)
	}
	for _, k := range keys {
		if vars[k] == "" {
			vars[k] = fromFile[k]
		}
	}
	if vars["NODEKIT_CRI_ENDPOINT"] == "" {
		return nil, fmt.Errorf("NODEKIT_CRI_ENDPOINT is set neither in the environment nor in %s", envFile)
	}
	return vars, nil
}

// readEnvFile parses "export K=V" (or "K=V") lines; values may be quoted.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
