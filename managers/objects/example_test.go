package objects_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/objects"
)

// A pod that takes env from a ConfigMap is registered; the ConfigMap is
// then served from its own watch.
func ExampleWatchManager() {
	client := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "settings"},
		Data:       map[string]string{"color": "blue"},
	})
	m := objects.NewWatchManager(client, clock.RealClock{}, logr.Discard(), objects.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()

	m.RegisterPod(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", EnvFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
		}}}},
	})
	cm, err := m.GetConfigMap(ctx, "ns", "settings")
	if err != nil {
		fmt.Println(err)
	} else {
		fmt.Println("color:", cm.Data["color"])
	}
	cancel()
	fmt.Println("run:", <-done)
	// Output:
	// color: blue
	// run: <nil>
}

// A token is requested once and served from the cache until it needs a
// refresh.
func ExampleTokens() {
	calls := 0
	client := fake.NewClientset()
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		tr.Status.Token = fmt.Sprintf("token-%d", calls)
		tr.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Hour))
		return true, tr, nil
	})
	m := objects.NewTokens(client, clock.RealClock{}, logr.Discard(), objects.Config{})
	seconds := int64(3600)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{"api"}, ExpirationSeconds: &seconds,
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web", UID: "uid-1"},
	}}
	for i := 0; i < 2; i++ {
		tr, err := m.GetServiceAccountToken(context.Background(), "ns", "default", req)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(tr.Status.Token)
	}
	fmt.Println("requests:", calls)
	// Output:
	// token-1
	// token-1
	// requests: 1
}
