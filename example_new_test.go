package nodekit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/server"
)

// New builds an agent from the defaults; here on the simulated runtime,
// with one static pod from a manifest directory and no HTTP port.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "nodekit-example")
	defer os.RemoveAll(dir)
	manifests := filepath.Join(dir, "manifests")
	_ = os.Mkdir(manifests, 0o755)
	_ = os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(simPod), 0o644)

	cfg := nodekit.DefaultConfig()
	cfg.NodeName, cfg.Runtime, cfg.RootDir, cfg.Manifests = "sim-node", nodekit.RuntimeSim, filepath.Join(dir, "root"), manifests
	cfg.Server.Port = 0
	var pods server.PodLister
	app := nodekit.New(cfg, logr.Discard(), nodekit.Defaults(), fx.Populate(&pods))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		fmt.Println("start:", err)
		return
	}
	defer app.Stop(ctx)
	for ctx.Err() == nil {
		if ps := pods.GetPods(); len(ps) == 1 && ps[0].Status.Phase == corev1.PodRunning {
			fmt.Println(ps[0].Name, ps[0].Status.Phase)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	fmt.Println("the pod did not run")
	// Output: web-sim-node Running
}
