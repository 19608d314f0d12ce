package nodekit

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx/fxevent"
)

// fxLogger sends fx's own events to the agent's logger; errors at V(0).
type fxLogger struct{ log logr.Logger }

// LogEvent implements fxevent.Logger.
func (l fxLogger) LogEvent(e fxevent.Event) {
	switch e := e.(type) {
	case *fxevent.Provided:
		if e.Err != nil {
			l.log.Error(e.Err, "fx provide failed", "constructor", e.ConstructorName)
		}
	case *fxevent.Invoked:
		if e.Err != nil {
			l.log.Error(e.Err, "fx invoke failed", "function", e.FunctionName)
		}
	case *fxevent.OnStartExecuted:
		if e.Err != nil {
			l.log.Error(e.Err, "fx start hook failed", "callee", e.FunctionName)
		}
	case *fxevent.Started:
		if e.Err != nil {
			l.log.Error(e.Err, "fx start failed")
		}
	default:
		l.log.Info("fx event", "event", e)
	}
}
