package promutil

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRegisterSharesAnAlreadyRegisteredCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "nodekit_test_total", Help: "test"}
	a := Register(reg, prometheus.NewCounter(opts))
	b := Register(reg, prometheus.NewCounter(opts))
	a.Inc()
	b.Inc()
	if got := testutil.ToFloat64(a); got != 2 {
		t.Fatalf("shared counter = %v, want 2", got)
	}
}

func TestRegisterWithoutRegistryStillCounts(t *testing.T) {
	c := Register(nil, prometheus.NewCounter(prometheus.CounterOpts{Name: "x", Help: "x"}))
	c.Inc()
	if testutil.ToFloat64(c) != 1 {
		t.Fatal("unregistered counter did not count")
	}
}
