package eviction

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// DefaultMonitoringInterval is the kubelet's eviction monitoring period.
const DefaultMonitoringInterval = 10 * time.Second

// Config is the eviction policy in the kubelet's flag forms. The zero
// value is the kubelet's defaults.
type Config struct {
	// Hard are the hard thresholds (--eviction-hard); signals not named
	// keep the kubelet's defaults, "none" turns them off. Defaults to
	// DefaultHard.
	Hard string `json:"hard,omitempty"`
	// Soft are the soft thresholds (--eviction-soft); each needs a grace
	// period. Defaults to none.
	Soft string `json:"soft,omitempty"`
	// SoftGracePeriod is how long each soft threshold must hold before it
	// acts (--eviction-soft-grace-period, signal -> duration). Defaults to
	// none.
	SoftGracePeriod map[string]string `json:"softGracePeriod,omitempty"`
	// MinimumReclaim is how far past its threshold a signal must get back
	// (--eviction-minimum-reclaim, signal -> quantity or percent).
	// Defaults to none.
	MinimumReclaim map[string]string `json:"minimumReclaim,omitempty"`
	// MaxPodGracePeriodSeconds bounds the grace period of a pod evicted
	// for a soft threshold (--eviction-max-pod-grace-period); 0 uses the
	// pod's own. Defaults to 0.
	MaxPodGracePeriodSeconds int64 `json:"maxPodGracePeriodSeconds,omitempty"`
	// PressureTransitionPeriod is how long a pressure condition stays True
	// after its last observation (--eviction-pressure-transition-period).
	// Defaults to 5m.
	PressureTransitionPeriod time.Duration `json:"pressureTransitionPeriod,omitempty"`
	// MonitoringInterval is how often the signals are read. Defaults to
	// 10s.
	MonitoringInterval time.Duration `json:"monitoringInterval,omitempty"`
}

// Validate checks the policy as the kubelet does.
func (c Config) Validate() error {
	if _, err := c.Policy(); err != nil {
		return err
	}
	if c.MaxPodGracePeriodSeconds < 0 || c.PressureTransitionPeriod < 0 || c.MonitoringInterval < 0 {
		return errors.New("eviction: maxPodGracePeriodSeconds, pressureTransitionPeriod and monitoringInterval must not be negative")
	}
	return nil
}

// Policy is the Monitor's policy of a Config.
func (c Config) Policy() (Policy, error) {
	hard, err := HardThresholds(c.Hard)
	if err != nil {
		return Policy{}, fmt.Errorf("eviction hard: %w", err)
	}
	soft, err := ParseThresholds(c.Soft)
	if err != nil {
		return Policy{}, fmt.Errorf("eviction soft: %w", err)
	}
	reclaim := map[Signal]Value{}
	for s, v := range c.MinimumReclaim {
		if !signals[Signal(s)] {
			return Policy{}, fmt.Errorf("eviction minimumReclaim: unsupported eviction signal %q", s)
		}
		val, err := parseValue(v)
		if err != nil {
			return Policy{}, fmt.Errorf("eviction minimumReclaim %s: %w", s, err)
		}
		reclaim[Signal(s)] = val
	}
	p := Policy{TransitionPeriod: c.PressureTransitionPeriod}
	add := func(s Signal, v Value, hard bool, grace time.Duration) {
		th := Threshold{Signal: s, Value: v, Hard: hard, GracePeriod: grace}
		if r, ok := reclaim[s]; ok {
			th.MinReclaim = &r
		}
		p.Thresholds = append(p.Thresholds, th)
	}
	for _, s := range sortedSignals(hard) {
		add(s, hard[s], true, 0)
	}
	for s := range c.SoftGracePeriod {
		if _, ok := soft[Signal(s)]; !ok {
			return Policy{}, fmt.Errorf("eviction softGracePeriod: %s has no soft threshold", s)
		}
	}
	for _, s := range sortedSignals(soft) {
		g, ok := c.SoftGracePeriod[string(s)]
		if !ok {
			return Policy{}, fmt.Errorf("eviction soft: threshold %s has no grace period", s)
		}
		d, err := time.ParseDuration(g)
		if err != nil || d < 0 {
			return Policy{}, fmt.Errorf("eviction softGracePeriod %s %q: want a non-negative duration", s, g)
		}
		add(s, soft[s], false, d)
	}
	return p, nil
}

func sortedSignals(t Thresholds) []Signal {
	var out []Signal
	for s := range t {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
