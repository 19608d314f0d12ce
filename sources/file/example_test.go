package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/sources"
	"github.com/nodekit/nodekit/sources/file"
)

func ExampleSource() {
	dir, err := os.MkdirTemp("", "manifests")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	manifest := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: nginx\n    image: nginx:1.27\n"
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(manifest), 0o644); err != nil {
		panic(err)
	}

	src := file.New(clock.RealClock{}, logr.Discard(), file.Config{Path: dir, NodeName: "Node-1"})
	ctx, cancel := context.WithCancel(context.Background())
	snapshots := make(chan []*corev1.Pod)
	done := make(chan error)
	go func() { done <- src.Run(ctx, snapshots) }()

	pod := (<-snapshots)[0]
	fmt.Println(pod.Namespace, pod.Name, pod.Spec.NodeName, pod.Spec.Containers[0].ImagePullPolicy)
	fmt.Println(pod.Annotations[sources.AnnotationHash] == string(pod.UID))
	cancel()
	fmt.Println(<-done)
	// Output:
	// default web-node-1 Node-1 IfNotPresent
	// true
	// <nil>
}
