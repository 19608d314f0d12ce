package atomicref

import "sync/atomic"

// Ref is an atomically replaced value of type T (usually an interface).
// The zero Ref holds nothing.
type Ref[T any] struct {
	p atomic.Pointer[T]
}

// Store sets the value; storing a nil interface empties the Ref. It does
// not block.
func (r *Ref[T]) Store(v T) {
	if any(v) == nil {
		r.p.Store(nil)
		return
	}
	r.p.Store(&v)
}

// Load returns the value and true, or T's zero value and false when the
// Ref is empty (or is itself nil). It does not block.
func (r *Ref[T]) Load() (T, bool) {
	var zero T
	if r == nil {
		return zero, false
	}
	p := r.p.Load()
	if p == nil {
		return zero, false
	}
	return *p, true
}
