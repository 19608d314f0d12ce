package apiserver_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/sources/apiserver"
)

// The source sends the pods bound to its node as soon as it has listed
// them; pods of other nodes never show up.
func ExampleSource_Run() {
	client := fake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "1"}, Spec: corev1.PodSpec{NodeName: "node1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", UID: "2"}, Spec: corev1.PodSpec{NodeName: "node2"}},
	)
	src := apiserver.New(client, clock.RealClock{}, logr.Discard(), apiserver.Config{NodeName: "node1"})

	ctx, cancel := context.WithCancel(context.Background())
	updates := make(chan []*corev1.Pod)
	done := make(chan error)
	go func() { done <- src.Run(ctx, updates) }()
	for _, pod := range <-updates {
		fmt.Println(pod.Namespace + "/" + pod.Name)
	}
	cancel()
	fmt.Println(<-done)
	// Output:
	// default/web
	// <nil>
}
