package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
)

func TestRuntimeSimServesTheSimulatedRuntimeAndRemovesAStaleSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sim.sock")
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
	done := make(chan error, 1)
	listening := make(chan struct{})
	go func() {
		done <- runSim(ctx, &simOptions{socket: sock, listening: func() { close(listening) }}, logr.Discard())
	}()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("runtime-sim returned before listening: %v", err)
	}
	bctx, bcancel := context.WithTimeout(ctx, 30*time.Second)
	defer bcancel()
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().WithEndpoint("unix://" + sock).
		WithConnectionTimeout(10 * time.Second).WithTracerProvider(nil).Build(bctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := rs.Version(bctx, "v1")
	if err != nil || v.RuntimeName != "sim" || !strings.HasSuffix(v.RuntimeVersion, "-sim") {
		t.Fatalf("Version = %v, %v; want the simulated runtime", v, err)
	}
	_ = rs.Close(context.Background())
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runtime-sim returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runtime-sim did not stop")
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}

func TestRuntimeSimRefusesToRemoveAFileThatIsNotASocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not-a-socket")
	if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runSim(t.Context(), &simOptions{socket: path}, logr.Discard())
	if err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("err = %v, want one about a file in the way", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the file was removed: %v", err)
	}
}

func TestRunWithTheSimulatedRuntimeNeedsNoEndpoint(t *testing.T) {
	o, err := parse(t, "", "--runtime", "sim")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := o.config().Complete()
	if err != nil {
		t.Fatal(err)
	}
	cfg.RootDir = t.TempDir()
	if cfg.Runtime != "sim" {
		t.Fatalf("Runtime = %q, want sim", cfg.Runtime)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	o, _ = parse(t, "runtime: containerd\n")
	if err := o.config().Validate(); err == nil || !strings.Contains(err.Error(), `runtime "containerd"`) {
		t.Fatalf("Validate of runtime containerd: %v, want an error naming it", err)
	}
}
