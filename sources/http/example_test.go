package http_test

import (
	"context"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/sources/http"
)

func ExampleSource() {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, _ *nethttp.Request) {
		fmt.Fprint(w, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: main\n    image: nginx\n")
	}))
	defer srv.Close()
	src := http.New(clock.RealClock{}, logr.Discard(), http.Config{URL: srv.URL, NodeName: "edge-1"})
	ctx, cancel := context.WithCancel(context.Background())
	updates := make(chan []*corev1.Pod)
	done := make(chan error)
	go func() { done <- src.Run(ctx, updates) }()
	pods := <-updates
	cancel()
	<-done
	fmt.Println(src.Name(), pods[0].Namespace+"/"+pods[0].Name, pods[0].Spec.NodeName)
	// Output: http default/web-edge-1 edge-1
}
