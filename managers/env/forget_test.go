package env

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestForgetOfflineDropsWhatWasLoggedOfTheGonePodsOnly(t *testing.T) {
	objs := objectsWith()
	var flag offlineFlag
	var lines []string
	b, _ := offlineBuilder(t, objs, &flag, &lines)
	pod := envPod()
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err != nil {
		t.Fatal(err)
	}
	objs.err = errors.New("connect: connection refused")
	flag.Store(true)
	use := func() int {
		t.Helper()
		if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err != nil {
			t.Fatal(err)
		}
		return strings.Count(strings.Join(lines, "\n"), "uses the offline copy")
	}
	if n := use(); n != 2 {
		t.Fatalf("%d log lines, want 2", n)
	}
	b.ForgetOffline(func(uid types.UID) bool { return uid == "another" })
	if n := use(); n != 2 {
		t.Fatalf("forgetting another pod: %d log lines, want still 2", n)
	}
	b.ForgetOffline(func(uid types.UID) bool { return uid == pod.UID })
	o := b.offline.Load()
	o.mu.Lock()
	left := len(o.logged)
	o.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d pods remembered after the pod was forgotten, want none", left)
	}
	if n := use(); n != 4 {
		t.Fatalf("after the pod was forgotten: %d log lines, want 4 (logged anew)", n)
	}
}

func TestForgetOfflineWithoutAStoreDoesNothing(t *testing.T) {
	New(Deps{Objects: objectsWith()}, Config{}).ForgetOffline(func(types.UID) bool { return true })
}
