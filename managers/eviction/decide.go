package eviction

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Threshold is one eviction threshold as the monitor applies it.
type Threshold struct {
	Signal Signal
	Value  Value
	// GracePeriod is how long a soft threshold must hold before it acts;
	// zero for a hard threshold.
	GracePeriod time.Duration
	// Hard is true for --eviction-hard thresholds.
	Hard bool
	// MinReclaim, when set, is how far below the threshold a signal must
	// get back before the threshold counts as resolved
	// (--eviction-minimum-reclaim).
	MinReclaim *Value
}

// Policy is the monitor's set of thresholds and its condition transition
// period (--eviction-pressure-transition-period, 5m by default).
type Policy struct {
	Thresholds       []Threshold
	TransitionPeriod time.Duration
}

// DefaultTransitionPeriod is the kubelet's
// --eviction-pressure-transition-period.
const DefaultTransitionPeriod = 5 * time.Minute

// conditionOf is the node condition each signal drives.
var conditionOf = map[Signal]corev1.NodeConditionType{
	SignalMemoryAvailable: corev1.NodeMemoryPressure,
	SignalNodeFsAvailable: corev1.NodeDiskPressure, SignalNodeFsInodesFree: corev1.NodeDiskPressure,
	SignalImageFsAvailable: corev1.NodeDiskPressure, SignalImageFsInodesFree: corev1.NodeDiskPressure,
	SignalPIDAvailable: corev1.NodePIDPressure,
}

// Decision is one monitoring pass's outcome.
type Decision struct {
	// Conditions are the pressure conditions that hold (observed within
	// the transition period).
	Conditions map[corev1.NodeConditionType]bool
	// Act are the thresholds met for their grace period, which call for
	// reclaim, memory first.
	Act []Threshold
}

// Monitor keeps what the kubelet's eviction manager remembers between
// passes: the thresholds met last time (for minimum reclaim), when each was
// first observed (for soft grace periods) and when each condition was last
// observed (for the transition period). It is not safe for concurrent use.
type Monitor struct {
	policy        Policy
	met           map[int]bool      // by index in policy.Thresholds
	firstObserved map[int]time.Time // by index
	lastObserved  map[corev1.NodeConditionType]time.Time
}

// NewMonitor returns a Monitor for policy, with the default transition
// period when it has none.
func NewMonitor(policy Policy) *Monitor {
	if policy.TransitionPeriod == 0 {
		policy.TransitionPeriod = DefaultTransitionPeriod
	}
	return &Monitor{policy: policy, met: map[int]bool{}, firstObserved: map[int]time.Time{},
		lastObserved: map[corev1.NodeConditionType]time.Time{}}
}

// Observe runs one pass at now over the observations.
func (m *Monitor) Observe(now time.Time, obs Observations) Decision {
	met := map[int]bool{}
	for i, th := range m.policy.Thresholds {
		o, ok := obs[th.Signal]
		if !ok {
			continue
		}
		limit := th.Value.Amount(o.Capacity)
		if m.met[i] && th.MinReclaim != nil { // not yet resolved: it must reclaim past the threshold
			limit += th.MinReclaim.Amount(o.Capacity)
		}
		if o.Available < limit {
			met[i] = true
		}
	}
	for i := range m.firstObserved {
		if !met[i] {
			delete(m.firstObserved, i)
		}
	}
	for i := range met {
		if _, ok := m.firstObserved[i]; !ok {
			m.firstObserved[i] = now
		}
		m.lastObserved[conditionOf[m.policy.Thresholds[i].Signal]] = now
	}
	m.met = met
	d := Decision{Conditions: map[corev1.NodeConditionType]bool{}}
	for c, at := range m.lastObserved {
		if now.Sub(at) < m.policy.TransitionPeriod {
			d.Conditions[c] = true
		} else {
			delete(m.lastObserved, c)
		}
	}
	for i := range met {
		th := m.policy.Thresholds[i]
		if now.Sub(m.firstObserved[i]) >= th.GracePeriod {
			d.Act = append(d.Act, th)
		}
	}
	sort.Slice(d.Act, func(i, j int) bool {
		a, b := d.Act[i], d.Act[j]
		if (a.Signal == SignalMemoryAvailable) != (b.Signal == SignalMemoryAvailable) {
			return a.Signal == SignalMemoryAvailable
		}
		return a.Signal < b.Signal
	})
	return d
}
