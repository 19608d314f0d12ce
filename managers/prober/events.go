package prober

import noderuntime "github.com/nodekit/nodekit/runtime"

// LogRecorder is an EventRecorder that writes events to a logger, for
// agents that do not send events to an API server. It is the runtime
// package's, so that the prober and the runtime share one recorder.
type LogRecorder = noderuntime.LogRecorder

var _ EventRecorder = LogRecorder{}
