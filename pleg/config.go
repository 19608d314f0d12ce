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
)

// Config configures Generic. The zero value is valid and means the defaults.
type Config struct {
	// RelistPeriod is the pause between the end of one relist and the start
	// of the next. Defaults to 1s.
	RelistPeriod time.Duration
	// RelistThreshold is how old the last completed relist may be before
	// Healthy reports false. Defaults to 3m.
	RelistThreshold time.Duration
	// ChannelCapacity is the buffer of the event channel; events that do not
	// fit are dropped. Defaults to 1000.
	ChannelCapacity int
}

// Validate reports a negative field, or a threshold shorter than the relist
// period once defaults are applied.
func (c Config) Validate() error {
	var errs []error
	if c.RelistPeriod < 0 {
		errs = append(errs, fmt.Errorf("pleg: relistPeriod %v must not be negative", c.RelistPeriod))
	}
	if c.RelistThreshold < 0 {
		errs = append(errs, fmt.Errorf("pleg: relistThreshold %v must not be negative", c.RelistThreshold))
	}
	if c.ChannelCapacity < 0 {
		errs = append(errs, fmt.Errorf("pleg: channelCapacity %d must not be negative", c.ChannelCapacity))
	}
	if d := c.withDefaults(); len(errs) == 0 && d.RelistThreshold < d.RelistPeriod {
		errs = append(errs, fmt.Errorf("pleg: relistThreshold %v must not be shorter than relistPeriod %v", d.RelistThreshold, d.RelistPeriod))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero (or negative) field set to its
// default.
func (c Config) withDefaults() Config {
	if c.RelistPeriod <= 0 {
		c.RelistPeriod = DefaultRelistPeriod
	}
	if c.RelistThreshold <= 0 {
		c.RelistThreshold = DefaultRelistThreshold
	}
	if c.ChannelCapacity <= 0 {
		c.ChannelCapacity = DefaultChannelCapacity
	}
	return c
}
