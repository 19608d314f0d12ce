package promutil

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c on reg and returns it, or returns the collector
// already registered under the same descriptor (so two instances of a
// subsystem on one registry share their metrics instead of panicking). A nil
// reg leaves c unregistered: it still counts, nobody scrapes it.
func Register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(T); ok {
				return existing
			}
		}
		// A conflicting descriptor is a programming error in nodekit.
		panic(err)
	}
	return c
}
