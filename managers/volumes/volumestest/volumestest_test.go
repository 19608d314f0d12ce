package volumestest

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestFakePublishesVolumesOnlyOnceSetUp(t *testing.T) {
	f := &Fake{}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1"}}
	f.SetVolumes("u1", map[string]noderuntime.Volume{"v": {HostPath: "/x", Dir: true}})
	if len(f.PodVolumes("u1")) != 0 {
		t.Fatal("volumes before SetUpPod")
	}
	f.SetError(errors.New("not yet"))
	if err := f.SetUpPod(context.Background(), pod); err == nil || len(f.PodVolumes("u1")) != 0 {
		t.Fatalf("a failing SetUpPod: err %v, volumes %v", err, f.PodVolumes("u1"))
	}
	f.SetError(nil)
	if err := f.SetUpPod(context.Background(), pod); err != nil || f.PodVolumes("u1")["v"].HostPath != "/x" {
		t.Fatalf("SetUpPod: err %v, volumes %v", err, f.PodVolumes("u1"))
	}
	if err := f.CleanupPods(context.Background(), func(types.UID) bool { return true }); err != nil || len(f.PodVolumes("u1")) != 0 {
		t.Fatalf("CleanupPods: err %v, volumes %v", err, f.PodVolumes("u1"))
	}
	if setUps, torn, _ := f.Calls(); len(setUps) != 2 || len(torn) != 1 {
		t.Fatalf("calls %v %v", setUps, torn)
	}
}
