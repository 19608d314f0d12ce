package nodekit

import (
	"strings"
	"testing"
)

func TestValidateRefusesBadReservationsAndThresholds(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"an unknown reserved resource is refused", func(c *Config) { c.KubeReserved = map[string]string{"gpu": "1"} }, "kubeReserved"},
		{"a bad system-reserved quantity is refused", func(c *Config) { c.SystemReserved = map[string]string{"memory": "x"} }, "systemReserved"},
		{"a bad hard threshold is refused", func(c *Config) { c.EvictionHard = "memory.available<lots" }, "evictionHard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Runtime, cfg.NodeName = RuntimeSim, "n"
			tc.cfg(&cfg)
			cfg, err := cfg.Complete()
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
