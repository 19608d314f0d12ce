package pleg

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of Config, the kubelet's values for the generic PLEG.
const (
	// DefaultRelistPeriod is the kubelet's genericPlegRelistPeriod.
	DefaultRelistPeriod = time.Second
	// DefaultRelistThreshold is the kubelet's genericPlegRelistThreshold.
	DefaultRelistThreshold = 3 * time.Minute
	// DefaultChannelCapacity is the kubelet's plegChannelCapacity.
	DefaultChannelCapacity = 1000
	// DefaultRelistFailureThreshold is how many relists in a row may fail
	// before Healthy reports false. The kubelet has no such count (only the
	// 3m age of the last good relist); 10 at the 1s relist period reports a
	// runtime whose every list fails within about 10s, in step with the
	// runtime health check (7s) and the node status period (10s), while a
	// containerd restart (its socket is gone for ~2s) does not flip the
	// node's readiness.
	DefaultRelistFailureThreshold = 10
)

// Kind names a PLEG implementation that Module can provide.
type Kind string

// The PLEGs Module provides.
const (
	// KindGeneric is the relisting PLEG, Generic.
	KindGeneric Kind = "generic"
	// KindEvented is the PLEG driven by CRI container events, Evented.
	KindEvented Kind = "evented"
)

// Config configures the PLEG Module provides. The zero value is valid and
// means the generic PLEG with the kubelet's defaults.
type Config struct {
	// Kind selects the PLEG: "generic" (relisting) or "evented" (CRI
	// container events, relisting only to reconcile and as a fallback).
	// Defaults to "generic".
	Kind Kind
	// RelistPeriod is the pause between the end of one relist and the start
	// of the next; for the evented PLEG, the period of its fallback
	// relisting. Defaults to 1s.
	RelistPeriod time.Duration
	// RelistThreshold is how old the last completed relist may be before
	// Healthy reports false (for the evented PLEG receiving events, counted
	// beyond its reconcile period). Defaults to 3m.
	RelistThreshold time.Duration
	// ChannelCapacity is the buffer of the event channel; events that do not
	// fit are dropped. Defaults to 1000.
	ChannelCapacity int
	// RelistFailureThreshold is how many relists in a row may fail to list
	// the runtime before Healthy reports false, whatever the age of the last
	// good relist; a relist that succeeds makes it healthy again. It counts
	// every relist of the evented PLEG too (reconcile, fallback, for
	// waiting pod workers). Defaults to 10.
	RelistFailureThreshold int
	// Evented configures the evented PLEG; ignored by the generic one.
	// Defaults to EventedConfig's defaults.
	Evented EventedConfig
}

// Validate reports an unknown kind, a negative field, or a threshold shorter
// than the relist period once defaults are applied.
func (c Config) Validate() error {
	var errs []error
	switch c.Kind {
	case "", KindGeneric, KindEvented:
	default:
		errs = append(errs, fmt.Errorf("pleg: kind %q: want %q or %q", c.Kind, KindGeneric, KindEvented))
	}
	if c.RelistPeriod < 0 {
		errs = append(errs, fmt.Errorf("pleg: relistPeriod %v must not be negative", c.RelistPeriod))
	}
	if c.RelistThreshold < 0 {
		errs = append(errs, fmt.Errorf("pleg: relistThreshold %v must not be negative", c.RelistThreshold))
	}
	if c.ChannelCapacity < 0 {
		errs = append(errs, fmt.Errorf("pleg: channelCapacity %d must not be negative", c.ChannelCapacity))
	}
	if c.RelistFailureThreshold < 0 {
		errs = append(errs, fmt.Errorf("pleg: relistFailureThreshold %d must not be negative", c.RelistFailureThreshold))
	}
	if d := c.withDefaults(); len(errs) == 0 && d.RelistThreshold < d.RelistPeriod {
		errs = append(errs, fmt.Errorf("pleg: relistThreshold %v must not be shorter than relistPeriod %v", d.RelistThreshold, d.RelistPeriod))
	}
	if err := c.Evented.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero (or negative) field set to its
// default.
func (c Config) withDefaults() Config {
	if c.Kind == "" {
		c.Kind = KindGeneric
	}
	if c.RelistPeriod <= 0 {
		c.RelistPeriod = DefaultRelistPeriod
	}
	if c.RelistThreshold <= 0 {
		c.RelistThreshold = DefaultRelistThreshold
	}
	if c.ChannelCapacity <= 0 {
		c.ChannelCapacity = DefaultChannelCapacity
	}
	if c.RelistFailureThreshold <= 0 {
		c.RelistFailureThreshold = DefaultRelistFailureThreshold
	}
	c.Evented = c.Evented.withDefaults()
	return c
}

// Defaults of EventedConfig.
const (
	// DefaultReconcilePeriod is how often the evented PLEG relists while it
	// receives events, to find what the stream missed.
	DefaultReconcilePeriod = 300 * time.Second
	// DefaultWaiterRelistDelay is how long the evented PLEG lets pod
	// workers gather before it relists for them.
	DefaultWaiterRelistDelay = 50 * time.Millisecond
	// DefaultReconnectBackoff is the first pause before the event stream is
	// opened again.
	DefaultReconnectBackoff = 500 * time.Millisecond
	// DefaultMaxReconnectBackoff bounds the pause between attempts.
	DefaultMaxReconnectBackoff = 10 * time.Second
	// DefaultFallbackAfter is how many consecutive stream failures make the
	// evented PLEG relist every RelistPeriod.
	DefaultFallbackAfter = 3
)

// EventedConfig configures Evented beyond the fields of Config it shares
// with Generic. The zero value is valid and means the defaults.
type EventedConfig struct {
	// ReconcilePeriod is the period of the relist that catches what the
	// event stream missed (counted as missed events) while the stream is
	// healthy. Defaults to 300s.
	ReconcilePeriod time.Duration
	// WaiterRelistDelay is how long after a pod worker starts waiting for a
	// status newer than the cache can vouch for the PLEG relists to vouch
	// for it; workers that start waiting meanwhile share that relist.
	// Defaults to 50ms.
	WaiterRelistDelay time.Duration
	// ReconnectBackoff is the pause before the event stream is opened again
	// after it failed; it doubles with each failure in a row. Defaults to
	// 500ms.
	ReconnectBackoff time.Duration
	// MaxReconnectBackoff bounds that pause. Defaults to 10s.
	MaxReconnectBackoff time.Duration
	// FallbackAfter is how many stream failures in a row switch the PLEG to
	// relisting every RelistPeriod until the stream is back. Defaults to 3.
	FallbackAfter int
}

// Validate reports a negative field, or a maximum backoff shorter than the
// first once defaults are applied.
func (c EventedConfig) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"reconcilePeriod", c.ReconcilePeriod},
		{"waiterRelistDelay", c.WaiterRelistDelay},
		{"reconnectBackoff", c.ReconnectBackoff},
		{"maxReconnectBackoff", c.MaxReconnectBackoff},
	} {
		if f.d < 0 {
			errs = append(errs, fmt.Errorf("pleg: evented %s %v must not be negative", f.name, f.d))
		}
	}
	if c.FallbackAfter < 0 {
		errs = append(errs, fmt.Errorf("pleg: evented fallbackAfter %d must not be negative", c.FallbackAfter))
	}
	if d := c.withDefaults(); len(errs) == 0 && d.MaxReconnectBackoff < d.ReconnectBackoff {
		errs = append(errs, fmt.Errorf("pleg: evented maxReconnectBackoff %v must not be shorter than reconnectBackoff %v",
			d.MaxReconnectBackoff, d.ReconnectBackoff))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero (or negative) field set to its
// default.
func (c EventedConfig) withDefaults() EventedConfig {
	if c.ReconcilePeriod <= 0 {
		c.ReconcilePeriod = DefaultReconcilePeriod
	}
	if c.WaiterRelistDelay <= 0 {
		c.WaiterRelistDelay = DefaultWaiterRelistDelay
	}
	if c.ReconnectBackoff <= 0 {
		c.ReconnectBackoff = DefaultReconnectBackoff
	}
	if c.MaxReconnectBackoff <= 0 {
		c.MaxReconnectBackoff = DefaultMaxReconnectBackoff
	}
	if c.FallbackAfter <= 0 {
		c.FallbackAfter = DefaultFallbackAfter
	}
	return c
}
