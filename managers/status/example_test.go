package status_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/status"
	"github.com/nodekit/nodekit/sources"
)

// The manager is the agent's StatusStore.
var _ agent.StatusStore = (*status.StatusManager)(nil)

// Without a client the manager is a memory store: an agent without an API
// server keeps its statuses, and a pod never leaves a terminal phase.
func ExampleNew_standalone() {
	m := status.New(nil, nil, nil, clocktesting.NewFakeClock(time.Now()), logr.Discard(), status.Config{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default", UID: "1"}}
	m.SetPodStatus(pod, &corev1.PodStatus{Phase: corev1.PodSucceeded})
	m.SetPodStatus(pod, &corev1.PodStatus{Phase: corev1.PodRunning})
	s, _ := m.GetPodStatus("1")
	fmt.Println(s.Phase)
	// Output: Succeeded
}

// A mirror pod is the static pod, annotated with its config hash and owned
// by the Node.
func ExampleAPIMirrorClient_CreateMirrorPod() {
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", UID: "n-1"}})
	mc := status.NewMirrorClient(client, logr.Discard(), status.Config{NodeName: "node1"})
	static := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "etcd-node1", Namespace: "kube-system", UID: "hash1",
		Annotations: map[string]string{sources.AnnotationHash: "hash1"},
	}}
	if err := mc.CreateMirrorPod(context.Background(), static); err != nil {
		fmt.Println(err)
		return
	}
	mirror, _ := client.CoreV1().Pods("kube-system").Get(context.Background(), "etcd-node1", metav1.GetOptions{})
	fmt.Println(mirror.Annotations[sources.AnnotationMirror], mirror.OwnerReferences[0].Kind, mirror.OwnerReferences[0].Name)
	// Output: hash1 Node node1
}
