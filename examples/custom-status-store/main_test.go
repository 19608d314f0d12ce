package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/statustest"
)

// The decorated store keeps the StatusStore contract.
func TestPhaseHistoryPassesTheStatusStoreSuite(t *testing.T) {
	statustest.Suite(t, func() agent.StatusStore { return &PhaseHistory{Next: agent.NewMemoryStatuses()} })
}

const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1
`

// The whole app on the simulated runtime: the agent's status store is the
// PhaseHistory, and the static pod's history shows it going Pending then
// Running.
func TestTheAgentRecordsPhasesThroughTheSwappedStore(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests", "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := nodekit.DefaultConfig()
	cfg.NodeName, cfg.Runtime, cfg.RootDir, cfg.Server.Port = "n", nodekit.RuntimeSim, filepath.Join(dir, "root"), 0
	cfg.Manifests = filepath.Join(dir, "manifests")
	var (
		history *PhaseHistory
		store   agent.StatusStore
	)
	app := nodekit.New(cfg, logr.Discard(), nodekit.Defaults(), Module(), fx.Populate(&history, &store))
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
	if store != agent.StatusStore(history) {
		t.Fatalf("the agent's StatusStore is %T, want the PhaseHistory", store)
	}
	var phases map[string][]corev1.PodPhase
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		rec := httptest.NewRecorder()
		history.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if err := json.Unmarshal(rec.Body.Bytes(), &phases); err != nil {
			return false, err
		}
		for _, list := range phases {
			if slices.Contains(list, corev1.PodRunning) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no pod's history shows Running: %v (history %v)", err, phases)
	}
	for uid, list := range phases {
		if len(list) == 0 || list[len(list)-1] != corev1.PodRunning || slices.Index(list, corev1.PodRunning) != len(list)-1 {
			t.Errorf("pod %s went through %v, want phases ending in a single Running", uid, list)
		}
	}
}
