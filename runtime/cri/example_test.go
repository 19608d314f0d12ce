package cri_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/runtime/cri"
)

// ExampleNewManager runs a pod against the cri-api fake runtime: in nodekit
// the services come from k8s.io/cri-client connected to containerd.
func ExampleNewManager() {
	rs, is := fakeapi.NewFakeRuntimeService(), fakeapi.NewFakeImageService()
	is.SetFakeImages([]string{"localhost/nodekit/busybox:1"})
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	root, err := os.MkdirTemp("", "nodekit-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	m := cri.NewManager(rs, is, clk, logr.Discard(), cri.Config{
		InstanceID: "node-a", RootDir: root,
		PodLogsDir: filepath.Join(root, "logs"), ContainerLogsDir: filepath.Join(root, "containers"),
	})
	ctx := context.Background()

	fmt.Println("type before Version:", m.Type())
	if _, err := m.Version(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("type:", m.Type())

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{
			DNSPolicy:  corev1.DNSNone,
			Containers: []corev1.Container{{Name: "main", Image: "localhost/nodekit/busybox:1", ImagePullPolicy: corev1.PullNever}},
		},
	}
	result := m.SyncPod(ctx, pod, nil)
	for _, s := range result.Steps {
		fmt.Println(s.Action, s.Target, s.Err)
	}
	status, err := m.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(status.FindContainerStatusByName("main").State)
	// Output:
	// type before Version: cri
	// type: fakeRuntime
	// CreatePodSandbox hello_default(uid-1) <nil>
	// StartContainer main <nil>
	// running
}
