package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/sources/file"
	"github.com/nodekit/nodekit/sources/sourcetest"
)

const node = "n"

// message is the queue message that puts pod p under its namespace/name.
func message(t testing.TB, p *corev1.Pod) Message {
	p = p.DeepCopy()
	p.APIVersion, p.Kind = "v1", "Pod"
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return Message{Key: p.Namespace + "/" + p.Name, Manifest: raw}
}

// The queue source keeps the pod source contract (sources/sourcetest).
func TestQueueSourcePassesTheSourceSuite(t *testing.T) {
	sourcetest.Suite(t, func() sourcetest.Fixture {
		queue := make(chan Message, 100)
		held := map[string]bool{}
		return sourcetest.Fixture{
			Source: &QueueSource{Queue: queue, NodeName: node, Log: logr.Discard()},
			Set: func(pods []*corev1.Pod) error {
				want := map[string]bool{}
				for _, p := range pods {
					m := message(t, p)
					want[m.Key] = true
					queue <- m
				}
				for k := range held {
					if !want[k] {
						queue <- Message{Key: k, Delete: true}
					}
				}
				held = want
				return nil
			},
			Key: func(p *corev1.Pod) string { return p.Namespace + "/" + strings.TrimSuffix(p.Name, "-"+node) },
		}
	})
}

// The whole app on the simulated runtime: a pod put on the queue runs, and
// its removal from the queue stops it.
func TestAQueuedPodRunsAndItsRemovalStopsIt(t *testing.T) {
	cfg := nodekit.DefaultConfig()
	cfg.NodeName, cfg.Runtime, cfg.RootDir, cfg.Server.Port = node, nodekit.RuntimeSim, filepath.Join(t.TempDir(), "root"), 0
	queue := make(chan Message, 10)
	var statuses agent.StatusStore
	app := nodekit.New(cfg, logr.Discard(), nodekit.Defaults(), Module(queue), fx.Populate(&statuses))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := app.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1"}}}}
	p.Namespace, p.Name = "default", "web"
	m := message(t, p)
	decoded, _, err := file.DecodePod(m.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	want, err := file.URLPod(decoded, "queue:"+m.Key, node)
	if err != nil {
		t.Fatal(err)
	}
	queue <- m
	phase := func() corev1.PodPhase {
		if s, ok := statuses.GetPodStatus(want.UID); ok {
			return s.Phase
		}
		return ""
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return phase() == corev1.PodRunning, nil
	}); err != nil {
		t.Fatalf("the queued pod %s (UID %s) is not Running: phase %q, %v", want.Name, want.UID, phase(), err)
	}
	queue <- Message{Key: m.Key, Delete: true}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return phase() != corev1.PodRunning, nil
	}); err != nil {
		t.Fatalf("the pod removed from the queue still runs: %v", err)
	}
}
