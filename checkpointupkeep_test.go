package nodekit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/internal/objectcache"
	"github.com/nodekit/nodekit/sources/apiserver"
)

// completedConfig is a completed Config under a temporary root dir, with
// change applied first.
func completedConfig(t *testing.T, change func(*Config)) Config {
	t.Helper()
	cfg := Config{RootDir: t.TempDir()}
	if change != nil {
		change(&cfg)
	}
	done, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	return done
}

func upkeepClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
}

// checkpointPod writes pod into the pod checkpoint of cfg, as the API
// source does.
func checkpointPod(t *testing.T, cfg Config, ns, uid string) {
	t.Helper()
	data, err := json.Marshal(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", UID: types.UID(uid)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.APISource.CheckpointDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.APISource.CheckpointDir, uid+".json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func stores(t *testing.T, cfg Config) offlineStores {
	t.Helper()
	s, err := offlineContents(offlineContentsParams{Cfg: cfg, APISource: &apiserver.Source{}, Clock: upkeepClock(), Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTheObjectCheckpointIsOffByDefaultAndWritesNothing(t *testing.T) {
	cfg := completedConfig(t, nil)
	if cfg.APISource.CheckpointDir == "" {
		t.Fatal("the pod checkpoint is off by default")
	}
	if s := stores(t, cfg); s.Volumes != nil || s.Env != nil {
		t.Fatalf("default stores %+v, want none: no Secret or token may rest on disk unless asked for", s)
	}
	on := completedConfig(t, func(c *Config) { c.PodCheckpointObjects = true })
	s := stores(t, on)
	if s.Volumes == nil || s.Env == nil {
		t.Fatal("PodCheckpointObjects gave no store")
	}
	checkpointPod(t, on, "ns", "u1")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}}
	if err := s.Volumes.Save(pod, objectcache.SecretKey("creds"), &corev1.Secret{Data: map[string][]byte{"pw": []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(on.RootDir, objectCopiesDir, "u1", objectcache.SecretKey("creds")+".json")); err != nil {
		t.Fatalf("the opted-in store wrote no copy: %v", err)
	}
}

func TestTheObjectCheckpointNeedsThePodCheckpoint(t *testing.T) {
	cfg := completedConfig(t, func(c *Config) { c.PodCheckpointObjects, c.DisablePodCheckpoint = true, true })
	_, err := offlineContents(offlineContentsParams{Cfg: cfg, Clock: upkeepClock(), Log: logr.Discard()})
	if !errors.Is(err, errObjectsWithoutPods) {
		t.Fatalf("err = %v, want the object checkpoint refused without the pod checkpoint", err)
	}
}

// runUpkeep runs the upkeep's start (a context already done).
func runUpkeep(t *testing.T, cfg Config, services *checkpointedServices) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := checkpointUpkeep(upkeepParams{Cfg: cfg, Services: services, Clock: upkeepClock(), Log: logr.Discard()})
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCopiesAnEarlierRunLeftAreRemovedAtStartWithTheObjectCheckpointOff(t *testing.T) {
	for name, c := range map[string]struct {
		objects  bool
		wantKept bool
	}{
		"off (the default): removed": {},
		"on: kept":                   {objects: true, wantKept: true},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := completedConfig(t, func(cfg *Config) { cfg.PodCheckpointObjects = c.objects })
			left := filepath.Join(cfg.RootDir, objectCopiesDir, "u1", objectcache.SecretKey("creds")+".json")
			if err := os.MkdirAll(filepath.Dir(left), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(left, []byte(`{"object":{}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			runUpkeep(t, cfg, nil)
			if _, err := os.Stat(left); (err == nil) != c.wantKept {
				t.Fatalf("after the start the copy's stat is %v, want kept=%v", err, c.wantKept)
			}
		})
	}
}

func TestTheServiceCheckpointKeepsOnlyTheNamespacesOfCheckpointedPods(t *testing.T) {
	cfg := completedConfig(t, nil)
	dir := filepath.Join(cfg.RootDir, serviceCheckpointsDir)
	s := &checkpointedServices{inner: &fakeServices{}, offline: &fakeOffline{}, dir: dir, log: logr.Discard()}
	for _, ns := range []string{"default", "a", "gone"} {
		if err := s.save(ns, []*corev1.Service{svc(ns, "s", "10.0.0.9")}); err != nil {
			t.Fatal(err)
		}
	}
	checkpointPod(t, cfg, "a", "u1")
	runUpkeep(t, cfg, s) // at start
	present := func(ns string) bool {
		_, err := os.Stat(filepath.Join(dir, ns+".json"))
		return err == nil
	}
	if !present("default") || !present("a") || present("gone") {
		t.Fatalf("after the start: default %v, a %v, gone %v; want the namespace without a checkpointed pod alone removed",
			present("default"), present("a"), present("gone"))
	}
	// The pod leaves the checkpoint: its namespace goes at the next prune.
	if err := os.Remove(filepath.Join(cfg.APISource.CheckpointDir, "u1.json")); err != nil {
		t.Fatal(err)
	}
	u := &upkeep{cfg: cfg, services: s, clk: upkeepClock(), log: logr.Discard()}
	u.pruneServices()
	if present("a") || !present("default") {
		t.Fatalf("after the pod left: a %v, default %v; want a removed, default kept", present("a"), present("default"))
	}
	// A namespace written after the pod checkpoint was read stays.
	if err := s.save("late", []*corev1.Service{svc("late", "s", "10.0.0.9")}); err != nil {
		t.Fatal(err)
	}
	if err := s.prune(map[string]bool{}, time.Now().Add(-time.Hour)); err != nil || !present("late") {
		t.Fatalf("a namespace saved after the read: prune err %v, kept %v; want kept", err, present("late"))
	}
	// A namespace saved again after its removal is written again.
	if err := s.save("gone", []*corev1.Service{svc("gone", "s", "10.0.0.9")}); err != nil || !present("gone") {
		t.Fatalf("the same services saved again after the prune: err %v, written %v", err, present("gone"))
	}
}

func TestTheServiceCheckpointIsRemovedAtStartWithThePodCheckpointOff(t *testing.T) {
	cfg := completedConfig(t, func(c *Config) { c.DisablePodCheckpoint = true })
	left := filepath.Join(cfg.RootDir, serviceCheckpointsDir, "a.json")
	if err := os.MkdirAll(filepath.Dir(left), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(left, []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	runUpkeep(t, cfg, nil)
	if _, err := os.Stat(filepath.Dir(left)); !os.IsNotExist(err) {
		t.Fatalf("the service checkpoint is left with the pod checkpoint off (stat: %v)", err)
	}
}

func TestTheEnvBuilderForgetsThePodsWhoseCopiesGo(t *testing.T) {
	cfg := completedConfig(t, func(c *Config) { c.PodCheckpointObjects = true })
	copies := stores(t, cfg).Env.(*offlineCopies)
	var forgotten []types.UID
	copies.onForget(func(gone func(types.UID) bool) {
		for _, uid := range []types.UID{"u1", "u2"} {
			if gone(uid) {
				forgotten = append(forgotten, uid)
			}
		}
	})
	if err := copies.Forget("u1"); err != nil {
		t.Fatal(err)
	}
	if len(forgotten) != 1 || forgotten[0] != "u1" {
		t.Fatalf("Forget(u1) forgot %v, want [u1]", forgotten)
	}
	forgotten = nil
	checkpointPod(t, cfg, "ns", "u2")
	if err := copies.Prune(); err != nil {
		t.Fatal(err)
	}
	if len(forgotten) != 1 || forgotten[0] != "u1" {
		t.Fatalf("Prune forgot %v, want [u1] (u2 is checkpointed)", forgotten)
	}
	// The default env source hooks its builder up.
	n := len(copies.forget)
	_ = envSource(envParams{Cfg: cfg, Offline: copies, Log: logr.Discard()})
	if len(copies.forget) != n+1 {
		t.Fatal("the env source's builder does not forget the pods whose copies go")
	}
}
