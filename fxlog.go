package nodekit

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx/fxevent"
)

// fxLogger sends fx's own events to the agent's logger at V(6). fx returns
// every error it logs to the caller of New, Start or Stop, so errors are
// handled there, once, and only traced here.
type fxLogger struct{ log logr.Logger }

// LogEvent implements fxevent.Logger.
func (l fxLogger) LogEvent(e fxevent.Event) {
	l.log.V(6).Info("fx event", "type", eventType(e), "event", e)
}

func eventType(e fxevent.Event) string {
	switch e.(type) {
	case *fxevent.Provided:
		return "provided"
	case *fxevent.Decorated:
		return "decorated"
	case *fxevent.Invoked:
		return "invoked"
	case *fxevent.OnStartExecuted:
		return "onStart"
	case *fxevent.OnStopExecuted:
		return "onStop"
	case *fxevent.Started:
		return "started"
	case *fxevent.Stopped:
		return "stopped"
	}
	return "other"
}
