package cri

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/sim"
)

// TestGetPodsOverGRPCWithSandboxesOver16MiB serves a runtime holding 80
// pods whose sandboxes carry a 250,000-byte annotation each (as the
// kubelet's rule, or an earlier nodekit, made them) over gRPC, and reads it
// with k8s.io/cri-client: the full ListPodSandbox is over its 16 MiB limit
// (ResourceExhausted), and GetPods still returns all 80 pods, each with its
// sandbox and container.
func TestGetPodsOverGRPCWithSandboxesOver16MiB(t *testing.T) {
	const pods, size = 80, 250_000
	fake := fakeapi.NewFakeRuntimeService()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "cri.sock"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sim.Serve(ctx, l, fake, fakeapi.NewFakeImageService()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().WithEndpoint("unix://" + l.Addr().String()).
		WithConnectionTimeout(30 * time.Second).WithTracerProvider(nil).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rs.Close(context.Background()) })
	for i := range pods {
		uid := fmt.Sprintf("uid-%02d", i)
		labels := map[string]string{noderuntime.LabelInstance: testInstance, noderuntime.LabelPodUID: uid,
			noderuntime.LabelPodName: "p" + uid, noderuntime.LabelPodNamespace: "default"}
		cfg := &runtimeapi.PodSandboxConfig{
			Metadata:    &runtimeapi.PodSandboxMetadata{Name: "p" + uid, Namespace: "default", Uid: uid},
			Labels:      labels,
			Annotations: map[string]string{"example.com/blob": strings.Repeat("x", size)},
		}
		sb, err := fake.RunPodSandbox(ctx, cfg, "")
		if err != nil {
			t.Fatal(err)
		}
		cLabels := map[string]string{noderuntime.LabelContainerName: "main"}
		for k, v := range labels {
			cLabels[k] = v
		}
		if _, err := fake.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "main"}, Image: &runtimeapi.ImageSpec{Image: testImage}, Labels: cLabels,
		}, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("full ListPodSandbox over gRPC: %v, want ResourceExhausted", err)
	}

	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	m := NewManager(rs, fakeapi.NewFakeImageService(), clk, logr.Discard(), Config{InstanceID: testInstance, RootDir: t.TempDir()})
	got, err := m.GetPods(ctx, true)
	if err != nil {
		t.Fatalf("GetPods(all): %v", err)
	}
	if len(got) != pods {
		t.Fatalf("GetPods(all) = %d pods, want %d", len(got), pods)
	}
	for _, p := range got {
		if len(p.Sandboxes) != 1 || len(p.Containers) != 1 {
			t.Errorf("pod %s: %d sandboxes and %d containers, want 1 and 1", p.ID, len(p.Sandboxes), len(p.Containers))
		}
	}
	if running, err := m.GetPods(ctx, false); err != nil || len(running) != pods {
		t.Fatalf("GetPods(running) = %d pods, %v; want %d", len(running), err, pods)
	}
}
