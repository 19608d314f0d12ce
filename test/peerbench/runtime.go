package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
)

// runtime is the private containerd both agents run on.
type runtime struct{ rs criapi.RuntimeService }

func connect(ctx context.Context, endpoint string) (*runtime, error) {
	ctx = klog.NewContext(ctx, logr.Discard())
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().WithEndpoint(endpoint).
		WithConnectionTimeout(time.Minute).WithTracerProvider(nil).Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to CRI runtime at %s: %w", endpoint, err)
	}
	if _, err := rs.Version(ctx, "v1"); err != nil {
		return nil, fmt.Errorf("CRI runtime at %s does not answer: %w", endpoint, err)
	}
	return &runtime{rs: rs}, nil
}

// The kubelet's container labels both agents set.
const (
	podNameLabel       = "io.kubernetes.pod.name"
	containerNameLabel = "io.kubernetes.container.name"
)

// running returns the names of the benchmark pods whose container runs.
func (r *runtime) running(ctx context.Context) ([]string, error) {
	cs, err := r.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range cs {
		if c.Labels[containerNameLabel] == "main" && strings.HasPrefix(c.Labels[podNameLabel], "pb-") {
			names = append(names, c.Labels[podNameLabel])
		}
	}
	return names, nil
}

// clean stops and removes every sandbox of the runtime: it is private to
// the benchmark, and each run starts from an empty one.
func (r *runtime) clean(ctx context.Context) error {
	sbs, err := r.rs.ListPodSandbox(ctx, nil)
	if err != nil {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	for _, sb := range sbs {
		if err := r.rs.StopPodSandbox(ctx, sb.Id); err != nil {
			return fmt.Errorf("stop sandbox %s: %w", sb.Id, err)
		}
		if err := r.rs.RemovePodSandbox(ctx, sb.Id); err != nil {
			return fmt.Errorf("remove sandbox %s: %w", sb.Id, err)
		}
	}
	return nil
}
