package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit/server"
)

// staticPods is a PodLister over a fixed list.
type staticPods []*corev1.Pod

func (p staticPods) GetPods() []*corev1.Pod { return p }

// namedCheck is a HealthCheck with a fixed result.
type namedCheck struct {
	name string
	err  error
}

func (c namedCheck) Name() string { return c.name }
func (c namedCheck) Check() error { return c.err }

// The handler serves the routes without a listener; here through httptest.
func ExampleServer_Handler() {
	pods := staticPods{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}}
	checks := []server.HealthCheck{
		namedCheck{name: "syncloop"},
		namedCheck{name: "pleg", err: errors.New("relist has not run for 3m5s")},
	}
	h := server.New(pods, checks, nil, logr.Discard(), server.Config{}).Handler()

	for _, path := range []string{"/healthz", "/healthz/syncloop", "/pods"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Printf("GET %s: %d\n%s\n", path, rec.Code, rec.Body)
	}
	// Output:
	// GET /healthz: 500
	// [+]syncloop ok
	// [-]pleg failed: relist has not run for 3m5s
	// healthz check failed
	//
	// GET /healthz/syncloop: 200
	// ok
	// GET /pods: 200
	// {"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"web","namespace":"default"},"spec":{"containers":null},"status":{}}]}
}

// Serve runs on a listener the caller opened and stops when ctx ends.
func ExampleServer_Serve() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := server.New(staticPods{}, nil, nil, logr.Discard(), server.Config{Port: server.DefaultPort})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()

	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + l.Addr().String() + "/healthz")
	if err != nil {
		fmt.Println(err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(body))
	}
	cancel()
	fmt.Println("stopped:", <-done)
	// Output:
	// 200 ok
	// stopped: <nil>
}

// A package contributes a health check to the server's fx group with
// AsHealthCheck.
func ExampleAsHealthCheck() {
	var srv *server.Server
	app := fx.New(
		server.Module,
		fx.NopLogger,
		fx.Supply(logr.Discard(), server.Config{}),
		fx.Provide(
			func() server.PodLister { return staticPods{} },
			func() prometheus.Gatherer { return prometheus.NewRegistry() },
			server.AsHealthCheck(func() namedCheck {
				return namedCheck{name: "runtime", err: errors.New("runtime network not ready")}
			}),
		),
		fx.Populate(&srv),
	)
	if err := app.Err(); err != nil {
		fmt.Println(err)
		return
	}
	// The aggregate /healthz leaves the runtime out, as the kubelet's
	// (Config.HealthzIncludeRuntime puts it back); /healthz/runtime serves it.
	for _, path := range []string{"/healthz", "/healthz/runtime"} {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Print(path, " ", rec.Code, "\n", rec.Body, "\n")
	}
	// Output:
	// /healthz 200
	// ok
	// /healthz/runtime 500
	// [-]runtime failed: runtime network not ready
	// healthz check failed
}

// Port 0 turns the server off; nodekit's default configuration sets
// DefaultPort.
func ExampleConfig_Disabled() {
	fmt.Println(server.Config{}.Disabled(), server.Config{Port: server.DefaultPort}.Disabled())
	// Output: true false
}
