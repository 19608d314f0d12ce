package nodekit

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/nodeip"
	"github.com/nodekit/nodekit/managers/nodestatus"
	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
)

// routeHost is a nodeip.Host whose default route's interface has one
// address and whose DNS knows no name.
type routeHost struct{ ip string }

func (h routeHost) LookupIP(_ context.Context, name string) ([]net.IP, error) {
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}
func (h routeHost) InterfaceAddrs() ([]net.Addr, error) { return nil, nil }
func (h routeHost) DefaultRouteIP() (net.IP, error)     { return net.ParseIP(h.ip), nil }

// ipRecordingNodeStatus is a nodestatus.Manager that keeps the source its
// constructor is given.
type ipRecordingNodeStatus struct {
	nodestatus.Manager
	src nodeip.Source
}

// runningRuntime is a runtime whose pod runs with a pod-network address;
// it keeps the nodeip.Source its constructor is given, as cri.Module's
// does.
type runningRuntime struct {
	noderuntime.Runtime
	src nodeip.Source
}

func (*runningRuntime) SyncPod(context.Context, *corev1.Pod, *noderuntime.PodStatus) *noderuntime.SyncResult {
	return &noderuntime.SyncResult{}
}
func (*runningRuntime) GetPodStatus(_ context.Context, uid types.UID, _, _ string) (*noderuntime.PodStatus, error) {
	return &noderuntime.PodStatus{ID: uid, IPs: []string{"10.88.0.7"}}, nil
}

type noRequeue struct{}

func (noRequeue) Enqueue(types.UID, time.Duration) {}

// TestEveryReaderOfTheNodeIPAgrees wires the default nodeip.Source with the
// env source, the agent's Syncer and the node status reporter, and checks
// that a HOST_IP env var, the pod's status.hostIP and hostNetwork podIP,
// and the Node's source are the same address: the detected one without
// --node-ip, the configured one with it.
func TestEveryReaderOfTheNodeIPAgrees(t *testing.T) {
	for _, tc := range []struct {
		name, nodeIP, want string
	}{
		{name: "without --node-ip the default route's address is everywhere", want: "10.0.0.5"},
		{name: "with --node-ip that address is everywhere", nodeIP: "192.0.2.1", want: "192.0.2.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{NodeName: "node-a.invalid"}
			cfg.Agent.NodeName, cfg.Agent.NodeIP = cfg.NodeName, tc.nodeIP
			ns, rt := &ipRecordingNodeStatus{}, &runningRuntime{}
			statuses := agent.NewMemoryStatuses()
			var (
				envs   cri.EnvSource
				syncer podworkers.SyncHandler
				ips    nodeip.Source
				nodes  nodestatus.Manager
			)
			app := fxtest.New(t,
				fx.Supply(cfg, cfg.Agent, fx.Annotate(routeHost{"10.0.0.5"}, fx.As(new(nodeip.Host)))),
				fx.Provide(
					func() logr.Logger { return testr.New(t) },
					func() clock.Clock { return clocktesting.NewFakeClock(epochForTests) },
					func() clock.WithTicker { return clocktesting.NewFakeClock(epochForTests) },
					// Their constructors take the shared source.
					func(src nodeip.Source) nodestatus.Manager { ns.src = src; return ns },
					func(src nodeip.Source) noderuntime.Runtime { rt.src = src; return rt },
					func() agent.StatusStore { return statuses },
					func() agent.Requeuer { return noRequeue{} },
					envSource,
				),
				agent.Module,
				nodeIPWiring(),
				fx.Populate(&envs, &syncer, &ips, &nodes),
			)
			app.RequireStart()
			defer app.RequireStop()

			if ns.src != ips || rt.src != ips {
				t.Fatalf("the node status reporter got %v and the runtime %v, want the shared source", ns.src, rt.src)
			}
			got, err := ips.NodeIPs()
			if err != nil || !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("node IPs = %v, %v; want [%s] (the Node's InternalIP)", got, err, tc.want)
			}
			for _, hostNet := range []bool{false, true} {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ds", UID: types.UID("uid-" + tc.want + map[bool]string{true: "-h"}[hostNet])},
					Spec: corev1.PodSpec{NodeName: cfg.NodeName, HostNetwork: hostNet, Containers: []corev1.Container{{
						Name: "c", Image: "img",
						Env: []corev1.EnvVar{{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}}},
					}}},
				}
				env, err := envs.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], []string{"10.88.0.7"})
				if err != nil || len(env) != 1 || env[0].Value != tc.want {
					t.Fatalf("hostNetwork=%v: env = %v, %v; want HOST_IP=%s", hostNet, env, err, tc.want)
				}
				if _, err := syncer.SyncPod(context.Background(), podworkers.SyncPodCreate, pod, nil, &noderuntime.PodStatus{ID: pod.UID, IPs: []string{"10.88.0.7"}}); err != nil {
					t.Fatalf("SyncPod: %v", err)
				}
				st, _ := statuses.GetPodStatus(pod.UID)
				wantPodIP := "10.88.0.7"
				if hostNet {
					wantPodIP = tc.want
				}
				if st.HostIP != tc.want || len(st.HostIPs) != 1 || st.HostIPs[0].IP != tc.want || st.PodIP != wantPodIP {
					t.Fatalf("hostNetwork=%v: hostIP %q hostIPs %v podIP %q; want hostIP %s and podIP %s",
						hostNet, st.HostIP, st.HostIPs, st.PodIP, tc.want, wantPodIP)
				}
			}
		})
	}
}
