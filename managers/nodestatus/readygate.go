package nodestatus

// ReadyGate is one more reason, beside the agent's health, for the node to
// be NotReady: the shutdown manager's "node is shutting down". Its error
// is appended to the Ready condition's message, as the kubelet appends its
// shutdown manager's. It must be safe for concurrent use.
type ReadyGate interface {
	// NotReady returns nil, or why the node is not ready. It does not
	// block.
	NotReady() error
	// Changed receives a value after NotReady's verdict changed, so that
	// the node status is posted at once. The same channel on every call;
	// never closed.
	Changed() <-chan struct{}
}

// ReadyGated is the optional capability of a Manager whose Ready
// condition also follows a ReadyGate.
type ReadyGated interface {
	// SetReadyGate sets the gate; call it before Run (a gate set later
	// is read, but its Changed is not watched). nil removes it.
	SetReadyGate(ReadyGate)
}

var _ ReadyGated = (*Reporter)(nil)

// SetReadyGate implements ReadyGated.
func (r *Reporter) SetReadyGate(g ReadyGate) {
	r.gate.Store(g)
}

// gateNow is the gate's verdict, nil without a gate.
func (r *Reporter) gateNow() error {
	if g, ok := r.gate.Load(); ok {
		return g.NotReady()
	}
	return nil
}

// gateChanged is the gate's Changed channel, nil (never) without a gate.
func (r *Reporter) gateChanged() <-chan struct{} {
	if g, ok := r.gate.Load(); ok {
		return g.Changed()
	}
	return nil
}
