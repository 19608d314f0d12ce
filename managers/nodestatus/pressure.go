package nodestatus

import corev1 "k8s.io/api/core/v1"

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

// SetPressureSource implements PressureAware.
func (r *Reporter) SetPressureSource(s PressureSource) {
	r.pressure.Store(s)
}

// pressureConditionsNow are the source's conditions, nil without one.
func (r *Reporter) pressureConditionsNow() map[corev1.NodeConditionType]bool {
	if s, ok := r.pressure.Load(); ok {
		c := s.Conditions()
		if c == nil {
			c = map[corev1.NodeConditionType]bool{}
		}
		return c
	}
	return nil
}
