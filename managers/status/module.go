package status

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// Module provides the StatusManager as a Manager and the APIMirrorClient as
// a MirrorClient. It needs a clock.WithTicker, a logr.Logger and a Config;
// a kubernetes.Interface, a PodResolver and a DeletionSafety are used when
// provided. Without a kubernetes.Interface (standalone mode) the Manager
// keeps statuses in memory only and the MirrorClient is nil: there are no
// mirror pods without an API server. Module does not run the Manager: the
// application runs it.
var Module = fx.Module("status",
	fx.Provide(
		fx.Annotate(newFromParams, fx.As(new(Manager))),
		newMirrorFromParams,
	),
)

type params struct {
	fx.In

	Client   kubernetes.Interface `optional:"true"`
	Pods     PodResolver          `optional:"true"`
	Deletion DeletionSafety       `optional:"true"`
	Clock    clock.WithTicker
	Log      logr.Logger
	Config   Config
}

func newFromParams(p params) *StatusManager {
	return New(p.Client, p.Pods, p.Deletion, p.Clock, p.Log, p.Config)
}

type mirrorParams struct {
	fx.In

	Client kubernetes.Interface `optional:"true"`
	Log    logr.Logger
	Config Config
}

func newMirrorFromParams(p mirrorParams) MirrorClient {
	if p.Client == nil {
		return nil
	}
	return NewMirrorClient(p.Client, p.Log, p.Config)
}
