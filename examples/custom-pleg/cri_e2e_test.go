//go:build e2e

package main

import (
	"context"
	"testing"
	"time"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/types"
	criclient "k8s.io/cri-client/pkg"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func stopContainer(t *testing.T, endpoint, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().WithEndpoint(endpoint).
		WithConnectionTimeout(time.Minute).WithTracerProvider(nil).Build(ctx)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	defer rs.Close(ctx)
	if err := rs.StopContainer(ctx, id, 0); err != nil {
		t.Fatalf("stop container %s: %v", id, err)
	}
}

// stopAndRemove stops the agent and removes every pod it created.
func stopAndRemove(t *testing.T, app *fx.App, rt noderuntime.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
	pods, err := rt.GetPods(ctx, true)
	if err != nil {
		t.Errorf("list pods for cleanup: %v", err)
		return
	}
	grace := int64(0)
	for _, p := range pods {
		if err := rt.KillPod(ctx, nil, p, &grace); err != nil {
			t.Errorf("cleanup pod %s: %v", p.ID, err)
		}
	}
	if gc, ok := rt.(noderuntime.GarbageCollector); ok {
		if err := gc.GarbageCollect(ctx, func(types.UID) bool { return true }); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
}
