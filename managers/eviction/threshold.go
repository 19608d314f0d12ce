package eviction

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signal is an eviction signal, named as the kubelet names it.
type Signal string

// The kubelet's signals on Linux.
const (
	SignalMemoryAvailable   Signal = "memory.available"
	SignalNodeFsAvailable   Signal = "nodefs.available"
	SignalNodeFsInodesFree  Signal = "nodefs.inodesFree"
	SignalImageFsAvailable  Signal = "imagefs.available"
	SignalImageFsInodesFree Signal = "imagefs.inodesFree"
	SignalPIDAvailable      Signal = "pid.available"
)

// signals are the supported signals.
var signals = map[Signal]bool{
	SignalMemoryAvailable: true, SignalNodeFsAvailable: true, SignalNodeFsInodesFree: true,
	SignalImageFsAvailable: true, SignalImageFsInodesFree: true, SignalPIDAvailable: true,
}

// DefaultHard is the kubelet's --eviction-hard default on Linux.
const DefaultHard = "memory.available<100Mi,nodefs.available<10%,imagefs.available<15%,nodefs.inodesFree<5%,imagefs.inodesFree<5%"

// Value is a threshold's value: an amount, or a fraction of the
// signal's capacity.
type Value struct {
	// Quantity is the amount; nil when Percentage is used.
	Quantity *resource.Quantity
	// Percentage is the fraction of capacity (0.1 for "10%").
	Percentage float64
}

// Amount is the value against a capacity.
func (v Value) Amount(capacity int64) int64 {
	if v.Quantity != nil {
		return v.Quantity.Value()
	}
	return int64(v.Percentage * float64(capacity))
}

// String is the value as written in a flag.
func (v Value) String() string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return strconv.FormatFloat(v.Percentage*100, 'f', -1, 64) + "%"
}

// Thresholds map each signal to the value below which it is crossed.
type Thresholds map[Signal]Value

// ParseThresholds parses the kubelet's threshold list
// ("memory.available<100Mi,nodefs.available<10%"). Only the < operator
// exists; a signal may appear once; a percentage lies in [0%, 100%]; a
// quantity must not be negative.
func ParseThresholds(s string) (Thresholds, error) {
	out := Thresholds{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, stmt := range strings.Split(s, ",") {
		stmt = strings.TrimSpace(stmt)
		sig, val, ok := strings.Cut(stmt, "<")
		if !ok {
			return nil, fmt.Errorf("eviction threshold %q: want signal<value, the only operator is <", stmt)
		}
		signal := Signal(strings.TrimSpace(sig))
		if !signals[signal] {
			return nil, fmt.Errorf("eviction threshold %q: unsupported eviction signal %q", stmt, signal)
		}
		if _, dup := out[signal]; dup {
			return nil, fmt.Errorf("eviction threshold %q: signal %s given twice", stmt, signal)
		}
		v, err := parseValue(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("eviction threshold %q: %w", stmt, err)
		}
		out[signal] = v
	}
	return out, nil
}

func parseValue(val string) (Value, error) {
	if p, ok := strings.CutSuffix(val, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return Value{}, fmt.Errorf("invalid percentage %q", val)
		}
		if f < 0 || f > 100 {
			return Value{}, fmt.Errorf("percentage %q must be between 0%% and 100%%", val)
		}
		return Value{Percentage: f / 100}, nil
	}
	q, err := resource.ParseQuantity(val)
	if err != nil {
		return Value{}, fmt.Errorf("invalid quantity %q: %w", val, err)
	}
	if q.Sign() < 0 {
		return Value{}, fmt.Errorf("quantity %q must not be negative", val)
	}
	return Value{Quantity: &q}, nil
}

// HardThresholds parses an --eviction-hard value over the kubelet's
// defaults: a signal the value does not name keeps its default, and
// "none" turns every hard threshold off.
func HardThresholds(s string) (Thresholds, error) {
	if strings.TrimSpace(s) == "none" {
		return Thresholds{}, nil
	}
	out, err := ParseThresholds(DefaultHard)
	if err != nil {
		return nil, err
	}
	given, err := ParseThresholds(s)
	if err != nil {
		return nil, err
	}
	for k, v := range given {
		out[k] = v
	}
	return out, nil
}

// String is the list in flag form, sorted by signal.
func (t Thresholds) String() string {
	var parts []string
	for s, v := range t {
		parts = append(parts, string(s)+"<"+v.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// ReservedFor is what the hard thresholds take out of capacity for the
// node's allocatable, as the kubelet's node allocatable reservation:
// memory.available's amount from memory, nodefs.available's from
// ephemeral-storage (percentages of the capacity given).
func (t Thresholds) ReservedFor(capacity corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for sig, res := range map[Signal]corev1.ResourceName{
		SignalMemoryAvailable: corev1.ResourceMemory, SignalNodeFsAvailable: corev1.ResourceEphemeralStorage,
	} {
		v, ok := t[sig]
		c, has := capacity[res]
		if !ok || !has {
			continue
		}
		out[res] = *resource.NewQuantity(v.Amount(c.Value()), resource.BinarySI)
	}
	return out
}
