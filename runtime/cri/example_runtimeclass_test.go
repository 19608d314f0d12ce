package cri_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/runtime/cri"
)

// classes is a RuntimeClassGetter over a fixed map of class to handler; in
// nodekit it reads the API server.
type classes map[string]string

func (c classes) GetRuntimeClass(_ context.Context, name string) (*nodev1.RuntimeClass, error) {
	if h, ok := c[name]; ok {
		return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: h}, nil
	}
	return nil, apierrors.NewNotFound(nodev1.Resource("runtimeclass"), name)
}

// ExampleManager_SetRuntimeClassGetter runs a pod whose RuntimeClass names
// the runc handler, and shows a pod naming an unknown class refused.
func ExampleManager_SetRuntimeClassGetter() {
	rs, is := fakeapi.NewFakeRuntimeService(), fakeapi.NewFakeImageService()
	is.SetFakeImages([]string{"localhost/nodekit/busybox:1"})
	root, err := os.MkdirTemp("", "nodekit-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	m := cri.NewManager(rs, is, clocktesting.NewFakeClock(time.Unix(0, 0)), logr.Discard(), cri.Config{
		InstanceID: "node-a", RootDir: root,
		PodLogsDir: filepath.Join(root, "logs"), ContainerLogsDir: filepath.Join(root, "containers"),
	})
	m.SetRuntimeClassGetter(classes{"fast": "runc"})
	for _, class := range []string{"fast", "nope"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: class, Namespace: "default", UID: types.UID("uid-" + class)},
			Spec: corev1.PodSpec{
				RuntimeClassName: &class, DNSPolicy: corev1.DNSNone,
				Containers: []corev1.Container{{Name: "main", Image: "localhost/nodekit/busybox:1", ImagePullPolicy: corev1.PullNever}},
			},
		}
		step := m.SyncPod(context.Background(), pod, nil).Steps[0]
		fmt.Println(strings.TrimSpace(fmt.Sprintln(step.Action, step.Target, step.Err == nil, step.Message)))
	}
	sandboxes, _ := rs.ListPodSandbox(context.Background(), nil)
	for _, sb := range sandboxes {
		fmt.Println("sandbox of", sb.Metadata.Name, "handler", sb.RuntimeHandler)
	}
	// Output:
	// CreatePodSandbox fast_default(uid-fast) true
	// CreatePodSandbox nope_default(uid-nope) false Failed to create pod sandbox: runtimeclass.node.k8s.io "nope" not found
	// sandbox of fast handler runc
}
