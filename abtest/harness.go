package abtest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
)

// Swap turns one key=value of a variant into the fx options that make it,
// given the workload (for its knobs, such as MaxStarting). It runs once per
// run, before the agent is built; the options are added after
// nodekit.Defaults(), so fx.Decorate, fx.Replace and value-group members
// all work. A Swap that needs a configuration change decorates that
// subsystem's config (nodekit supplies each on its own), as pleg= does
// with pleg.Config.
type Swap func(w Workload) []fx.Option

// Harness runs a workload under variants and compares them. Its zero
// value is not usable: New returns one with the built-in keys.
type Harness struct {
	// Log is the agents' logger. Defaults to logr.Discard() (Main sets
	// one on stderr).
	Log logr.Logger
	// Progress gets a line as each variant starts. Defaults to nil (no
	// lines); Main sets it to Stderr.
	Progress io.Writer
	// Name heads Main's messages and usage. Defaults to "abtest".
	Name string
	// Stdout and Stderr are Main's outputs. Default to os.Stdout and
	// os.Stderr.
	Stdout, Stderr io.Writer

	swaps map[string]map[string]Swap
}

// New returns a harness with the built-in keys (see Builtins):
// pleg=generic|evented, start=fifo|priority, admission=default|deny.
func New() *Harness {
	h := &Harness{Log: logr.Discard(), Name: "abtest", Stdout: os.Stdout, Stderr: os.Stderr,
		swaps: map[string]map[string]Swap{}}
	for _, b := range Builtins() {
		if err := h.Register(b.Key, b.Value, b.Swap); err != nil {
			panic(err) // the built-ins are distinct
		}
	}
	return h
}

// Register adds the swap key=value. A key may be new or one that already
// has values (admission=mine next to admission=default); registering a
// key=value again is an error, as are empty or malformed names (a key or
// value holding ',', '=' or a space, which the variant syntax uses) and a
// nil swap.
func (h *Harness) Register(key, value string, swap Swap) error {
	switch {
	case key == "" || value == "" || strings.ContainsAny(key+value, ",= \t"):
		return fmt.Errorf("register %q=%q: key and value must be non-empty, without ',', '=' or spaces", key, value)
	case swap == nil:
		return fmt.Errorf("register %s=%s: nil swap", key, value)
	}
	if _, dup := h.swaps[key][value]; dup {
		return fmt.Errorf("register %s=%s: already registered", key, value)
	}
	if h.swaps[key] == nil {
		h.swaps[key] = map[string]Swap{}
	}
	h.swaps[key][value] = swap
	return nil
}

// Keys lists the registered swaps, one "key=value1|value2" per key, keys
// and values sorted.
func (h *Harness) Keys() []string {
	out := make([]string, 0, len(h.swaps))
	for key, values := range h.swaps {
		names := make([]string, 0, len(values))
		for v := range values {
			names = append(names, v)
		}
		sort.Strings(names)
		out = append(out, key+"="+strings.Join(names, "|"))
	}
	sort.Strings(out)
	return out
}

// Variant is one side of an A/B run: the swaps it makes. Its spec is
// comma-separated key=value pairs, such as "pleg=evented,start=priority";
// a key left out makes no swap (the agent's default).
type Variant struct {
	// Name is the spec as given; it heads the variant's rows.
	Name string
	// Values holds each key the spec names and its value.
	Values map[string]string

	swaps []Swap // in key order
}

// Parse parses a variant spec against the registered swaps. An unknown key
// or value is an error listing the registered ones; so is a key given
// twice.
func (h *Harness) Parse(spec string) (Variant, error) {
	v := Variant{Name: spec, Values: map[string]string{}}
	known := "registered: " + strings.Join(h.Keys(), ", ")
	for _, kv := range strings.Split(spec, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		values, isKey := h.swaps[key]
		switch {
		case !ok || !isKey:
			return Variant{}, fmt.Errorf("variant %q: %q is not a registered key=value; %s", spec, kv, known)
		case values[value] == nil:
			return Variant{}, fmt.Errorf("variant %q: %s=%s is not registered; %s", spec, key, value, known)
		}
		if _, twice := v.Values[key]; twice {
			return Variant{}, fmt.Errorf("variant %q: key %s given twice", spec, key)
		}
		v.Values[key] = value
	}
	keys := make([]string, 0, len(v.Values))
	for k := range v.Values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v.swaps = append(v.swaps, h.swaps[k][v.Values[k]])
	}
	return v, nil
}

// options are the fx options of the variant's swaps for w.
func (v Variant) options(w Workload) []fx.Option {
	var out []fx.Option
	for _, s := range v.swaps {
		out = append(out, s(w)...)
	}
	return out
}

// parseAll parses every spec; there must be at least one.
func (h *Harness) parseAll(specs []string) ([]Variant, error) {
	if len(specs) == 0 {
		return nil, errors.New("no variant to run")
	}
	out := make([]Variant, 0, len(specs))
	for _, s := range specs {
		v, err := h.Parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
