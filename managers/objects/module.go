package objects

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// Module provides the WatchManager as a Manager, the Tokens as a
// TokenManager and the Services as a ServiceLister. It needs a
// clock.WithTicker and a logr.Logger; a Config and a kubernetes.Interface
// are used when provided. Without a Kubernetes client (standalone mode)
// each of the three is nil: there are no API objects to read. Module runs
// nothing: the application runs each value that has a Run method.
var Module = fx.Module("objects",
	fx.Provide(
		newManagerFromParams,
		newTokensFromParams,
		newServicesFromParams,
	),
)

type params struct {
	fx.In

	Client kubernetes.Interface `optional:"true"`
	Clock  clock.WithTicker
	Log    logr.Logger
	Config Config `optional:"true"`
}

func newManagerFromParams(p params) Manager {
	if p.Client == nil {
		return nil
	}
	return NewWatchManager(p.Client, p.Clock, p.Log, p.Config)
}

func newTokensFromParams(p params) TokenManager {
	if p.Client == nil {
		return nil
	}
	return NewTokens(p.Client, p.Clock, p.Log, p.Config)
}

func newServicesFromParams(p params) ServiceLister {
	if p.Client == nil {
		return nil
	}
	return NewServices(p.Client, p.Clock, p.Log)
}
