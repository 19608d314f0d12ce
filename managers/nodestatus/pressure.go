package nodestatus

import (
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
)

// PressureSource decides the pressure conditions instead of the
// Reporter's own thresholds: the eviction manager, whose conditions
// follow its thresholds and transition period. It must be safe for
// concurrent use; the caller owns the returned map.
type PressureSource interface {
	Conditions() map[corev1.NodeConditionType]bool
}

// PressureAware is the optional capability of a Manager that takes its
// pressure conditions from a PressureSource.
type PressureAware interface {
	// SetPressureSource sets where the pressure conditions come from; nil
	// restores the Reporter's own thresholds (Config.Pressure). It is safe
	// to call at any time.
	SetPressureSource(PressureSource)
}

var _ PressureAware = (*Reporter)(nil)

// pressureHolder is an atomically replaced PressureSource.
type pressureHolder struct {
	v atomic.Pointer[PressureSource]
}

// SetPressureSource implements PressureAware.
func (r *Reporter) SetPressureSource(s PressureSource) {
	if s == nil {
		r.pressure.v.Store(nil)
		return
	}
	r.pressure.v.Store(&s)
}

// pressureConditionsNow are the source's conditions, nil without one.
func (r *Reporter) pressureConditionsNow() map[corev1.NodeConditionType]bool {
	if s := r.pressure.v.Load(); s != nil {
		c := (*s).Conditions()
		if c == nil {
			c = map[corev1.NodeConditionType]bool{}
		}
		return c
	}
	return nil
}
