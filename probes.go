package nodekit

import (
	"context"
	"sync/atomic"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	criapi "k8s.io/cri-api/pkg/apis"

	"github.com/nodekit/nodekit/managers/prober"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// probeWiring provides what the prober and the runtime share: the event
// recorder (the log, plus the API server when there is a client), the
// prober's exec runner over the CRI runtime service, and the prober's
// startup results (sidecars wait for their startup probes; a regular
// container whose startup probe failed is restarted) and liveness results
// (a container whose liveness probe failed is restarted) as the runtime's
// constructor takes them. The prober does not depend on the runtime (it
// execs through the CRI service), so there is no cycle to break.
func probeWiring() fx.Option {
	return fx.Options(
		fx.Provide(
			newEventRecorder,
			func(r *eventRecorder) noderuntime.EventRecorder { return r },
			func(rs criapi.RuntimeService) prober.ExecRunner { return prober.CRIExec{Service: rs} },
			runtimeStartupResults,
			runtimeLivenessResults,
		),
	)
}

type probeResultsParams struct {
	fx.In

	Results prober.ResultsProvider `optional:"true"`
}

// runtimeStartupResults is the prober's startup results for the runtime,
// nil without a prober.
func runtimeStartupResults(p probeResultsParams) noderuntime.StartupResults {
	if p.Results == nil {
		return nil
	}
	return startupResults{p.Results.Startup()}
}

// runtimeLivenessResults is the prober's liveness results for the
// runtime, nil without a prober.
func runtimeLivenessResults(p probeResultsParams) noderuntime.LivenessResults {
	if p.Results == nil {
		return nil
	}
	return livenessResults{p.Results.Liveness()}
}

// startupResults adapts the prober's startup results to the runtime's.
type startupResults struct{ r prober.Results }

// StartupResult implements runtime.StartupResults.
func (s startupResults) StartupResult(id noderuntime.ContainerID) noderuntime.StartupResult {
	switch r, _ := s.r.Get(id.String()); r {
	case prober.Success:
		return noderuntime.StartupSucceeded
	case prober.Failure:
		return noderuntime.StartupFailed
	}
	return noderuntime.StartupUnknown
}

// livenessResults adapts the prober's liveness results to the runtime's.
type livenessResults struct{ r prober.Results }

// LivenessFailed implements runtime.LivenessResults.
func (l livenessResults) LivenessFailed(id noderuntime.ContainerID) bool {
	r, ok := l.r.Get(id.String())
	return ok && r == prober.Failure
}

// eventRecorder is the agent's runtime.EventRecorder: it writes every event
// to the log and, while it runs with a Kubernetes client, also to the API
// server as the kubelet does (source component "kubelet", host the node
// name), through client-go's EventBroadcaster, which aggregates repeated
// events and drops events rather than block. Events recorded before Run
// starts or after it ends only go to the log.
type eventRecorder struct {
	log    noderuntime.LogRecorder
	client kubernetes.Interface
	node   string
	api    atomic.Pointer[record.EventRecorder]
}

var _ noderuntime.EventRecorder = (*eventRecorder)(nil)

type eventRecorderParams struct {
	fx.In

	Client kubernetes.Interface `optional:"true"`
	Cfg    Config
	Log    logr.Logger
}

// newEventRecorder returns the recorder; it starts nothing.
func newEventRecorder(p eventRecorderParams) *eventRecorder {
	return &eventRecorder{log: noderuntime.LogRecorder{Log: p.Log.WithName("events")}, client: p.Client, node: p.Cfg.NodeName}
}

// Eventf implements runtime.EventRecorder; it does not block.
func (r *eventRecorder) Eventf(object apiruntime.Object, eventType, reason, messageFmt string, args ...any) {
	r.log.Eventf(object, eventType, reason, messageFmt, args...)
	if api := r.api.Load(); api != nil {
		(*api).Eventf(object, eventType, reason, messageFmt, args...)
	}
}

// Run sends events to the API server until ctx ends, when there is a
// client; without one it returns nil at once.
func (r *eventRecorder) Run(ctx context.Context) error {
	if r.client == nil {
		return nil
	}
	b := record.NewBroadcaster(record.WithContext(ctx))
	defer b.Shutdown()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: r.client.CoreV1().Events("")})
	var rec record.EventRecorder = b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: r.node})
	r.api.Store(&rec)
	defer r.api.Store(nil)
	<-ctx.Done()
	return nil
}
