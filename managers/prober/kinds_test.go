package prober

import (
	"context"
	"net"
	"strings"
	"testing"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestProbeKindsThroughTheProber runs each kind of probe once through a
// worker against real local servers, with the pod IP from the recorded
// status, and checks the result and the events.
func TestProbeKindsThroughTheProber(t *testing.T) {
	t.Parallel()
	srv := newProbeServer(t)
	httpPort := port(t, srv.Listener.Addr())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	grpcPort, hs := startGRPC(t, true)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)

	handler := func(h corev1.ProbeHandler) *corev1.Probe {
		return execProbe(func(p *corev1.Probe) { p.ProbeHandler = h; p.FailureThreshold = 1 })
	}
	httpGet := func(path string, port intstr.IntOrString) *corev1.Probe {
		return handler(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: port}})
	}
	cases := []struct {
		name   string
		probe  *corev1.Probe
		want   Result
		events []string // prefixes
	}{
		{name: "httpGet on a named port of the pod IP succeeds", probe: httpGet("/ok", intstr.FromString("web")), want: Success},
		{name: "httpGet redirected elsewhere succeeds with a ProbeWarning event", probe: httpGet("/away", intstr.FromInt(httpPort)), want: Success,
			events: []string{"Warning ProbeWarning spec.containers{app} Liveness probe warning: Probe terminated redirects, Response body: "}},
		{name: "httpGet answered 404 fails with an Unhealthy event", probe: httpGet("/missing", intstr.FromInt(httpPort)), want: Failure,
			events: []string{"Warning Unhealthy spec.containers{app} Liveness probe failed: HTTP probe failed with statuscode: 404"}},
		{name: "httpGet on an unknown port name errors, changes nothing and says so", probe: httpGet("/ok", intstr.FromString("nope")), want: Success,
			events: []string{"Warning Unhealthy spec.containers{app} Liveness probe errored and resulted in unknown state: resolve probe port of container app: port \"nope\" not found"}},
		{name: "tcpSocket on the pod IP succeeds", probe: handler(corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(port(t, l.Addr()))}}), want: Success},
		{name: "grpc on a SERVING server succeeds", probe: handler(corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: int32(grpcPort)}}), want: Success},
		{name: "grpc on a NOT_SERVING service fails", probe: handler(corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: int32(grpcPort), Service: ptr("down")}}), want: Failure,
			events: []string{`Warning Unhealthy spec.containers{app} Liveness probe failed: service unhealthy (responded with "NOT_SERVING")`}},
		{name: "a probe without a handler errors", probe: handler(corev1.ProbeHandler{}), want: Success,
			events: []string{"Warning Unhealthy spec.containers{app} Liveness probe errored and resulted in unknown state: probe of container app in pod ns/web: missing probe handler"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Config{})
			pod := newPod(corev1.Container{Name: "app", LivenessProbe: tc.probe,
				Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: int32(httpPort)}}})
			e.p.AddPod(pod)
			e.p.UpdatePodStatus(pod, podStatus(running("app", ctrID, epoch)))
			e.worker(t, "app", Liveness).doProbe(context.Background())
			e.p.http.CloseIdleConnections()
			if r, _ := e.p.Liveness().Get(ctrID); r != tc.want {
				t.Errorf("liveness %v, want %v", r, tc.want)
			}
			got := e.rec.list()
			if len(got) != len(tc.events) {
				t.Fatalf("events %q, want %d starting %q", got, len(tc.events), tc.events)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.events[i]) {
					t.Errorf("event %q, want prefix %q", got[i], tc.events[i])
				}
			}
		})
	}
}
