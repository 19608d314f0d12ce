package sources_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/sources"
)

// oneShot is a source that sends one snapshot and then waits.
type oneShot struct{ pods []*corev1.Pod }

func (oneShot) Name() string { return sources.FileSource }

func (o oneShot) Run(ctx context.Context, out chan<- []*corev1.Pod) error {
	select {
	case out <- o.pods:
	case <-ctx.Done():
		return nil
	}
	<-ctx.Done()
	return nil
}

func ExampleMux() {
	src := oneShot{pods: []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "1"}}}}
	mux := sources.NewMux([]sources.Source{src}, clock.RealClock{}, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mux.Run(ctx) }()

	u := <-mux.Updates()
	fmt.Println(u.Op, u.Source, u.Pods[0].Name, u.Pods[0].Annotations[sources.AnnotationSource])
	cancel()
	fmt.Println(<-done)
	// Output:
	// ADD file web file
	// <nil>
}
