package sim_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/runtime/sim"
)

// A container scripted to exit after 5s with code 1, driven by a fake clock.
func ExampleNew() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	rt := sim.New(clk, logr.Discard(), sim.Config{})

	sb, _ := rt.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "crashy", Namespace: "default", Uid: "u1"},
		Annotations: map[string]string{
			"sim.nodekit.io/app.exit-after": "5s",
			"sim.nodekit.io/app.exit-code":  "1",
		},
	}, "")
	id, _ := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1"},
	}, nil)
	_ = rt.StartContainer(ctx, id)

	show := func() {
		st, _ := rt.ContainerStatus(ctx, id, false)
		line := fmt.Sprint(clk.Now().Format("15:04:05"), " ", st.Status.State, " exit code ", st.Status.ExitCode, " ", st.Status.Reason)
		fmt.Println(strings.TrimSpace(line))
	}
	show()
	clk.Step(5 * time.Second)
	show()
	v, _ := rt.Version(ctx, "v1")
	fmt.Println(v.RuntimeName, v.RuntimeVersion)
	// Output:
	// 03:04:05 CONTAINER_RUNNING exit code 0
	// 03:04:10 CONTAINER_EXITED exit code 1 Error
	// sim 0.1.0-sim
}
