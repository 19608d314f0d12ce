package env

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/internal/objectcache"
)

type offlineFlag struct{ atomic.Bool }

func (f *offlineFlag) Offline() bool { return f.Load() }

// offlineBuilder is a Builder with an offline store over a checkpoint in
// which testPod is; the logs are counted.
func offlineBuilder(t *testing.T, objs *fakeObjects, flag *offlineFlag, lines *[]string) (*Builder, *objectcache.Store) {
	t.Helper()
	root := t.TempDir()
	cp := filepath.Join(root, "pod-checkpoints")
	if err := os.MkdirAll(cp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cp, "uid-1.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	store := objectcache.New(objectcache.Config{Dir: filepath.Join(root, "objects"), CheckpointDir: cp}, flag, clk, logr.Discard())
	b := New(Deps{Objects: objs}, Config{})
	b.SetOffline(store, funcr.New(func(_, args string) { *lines = append(*lines, args) }, funcr.Options{}))
	return b, store
}

func envPod() *corev1.Pod {
	pod := testPod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PW", ValueFrom: secKey("sec", "pw", nil)}, {Name: "K", ValueFrom: cmKey("cm", "k", nil)}}
	pod.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{Prefix: "CM_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
	return pod
}

func TestOfflineTheEnvironmentComesFromTheCopiesOnlineFromTheAPI(t *testing.T) {
	objs := objectsWith()
	var flag offlineFlag
	var lines []string
	b, _ := offlineBuilder(t, objs, &flag, &lines)
	pod := envPod()
	want := map[string]string{"PW": "s3cret", "K": "cm-v", "CM_k": "cm-v", "CM_other": "o"}
	check := func(what string) {
		t.Helper()
		got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for k, v := range want {
			if asMap(got)[k] != v {
				t.Fatalf("%s: %s = %q, want %q (env %v)", what, k, asMap(got)[k], v, got)
			}
		}
	}
	check("online")
	// Online with the API server unreachable: no copy stands in.
	objs.err = errors.New("connect: connection refused")
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err == nil {
		t.Fatal("online, an unreachable API server gave an environment from the copies")
	}
	flag.Store(true)
	check("offline")
	check("offline again")
	if n := strings.Count(strings.Join(lines, "\n"), "uses the offline copy"); n != 2 {
		t.Fatalf("%d log lines, want one per object (the secret and the configMap):\n%s", n, strings.Join(lines, "\n"))
	}
	// Offline, but the API server answered: its answer stands.
	objs.err = nil
	objs.configMaps = map[string]*corev1.ConfigMap{}
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err == nil || !strings.Contains(err.Error(), `configmap "cm" not found`) {
		t.Fatalf("offline with the configMap deleted: err %v, want not found", err)
	}
	// Back online: fresh values.
	flag.Store(false)
	objs.configMaps = map[string]*corev1.ConfigMap{"ns/cm": {Data: map[string]string{"k": "new"}}}
	want = map[string]string{"PW": "s3cret", "K": "new", "CM_k": "new"}
	check("online after the outage")
}

func TestACorruptedEnvCopyIsAnErrorNamingThePodAndAMissingOneTheAPIError(t *testing.T) {
	objs := objectsWith()
	var flag offlineFlag
	var lines []string
	b, store := offlineBuilder(t, objs, &flag, &lines)
	pod := envPod()
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(store.Dir(), "uid-1", objectcache.ConfigMapKey("cm")+".json")
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	objs.err = errors.New("connect: connection refused")
	flag.Store(true)
	_, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if err == nil || !strings.Contains(err.Error(), "ns/p") || !strings.Contains(err.Error(), "unusable") || !strings.Contains(err.Error(), path) {
		t.Fatalf("offline with a corrupted copy: err %v, want one naming the pod and the file", err)
	}
	if err := store.Forget(pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("offline without a copy: err %v, want the API server's error", err)
	}
}
