package cri

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidateConfinementFields(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"the systemd driver is accepted", Config{InstanceID: "n", CgroupDriver: "systemd"}, ""},
		{"an unknown driver is refused", Config{InstanceID: "n", CgroupDriver: "runit"}, `CgroupDriver "runit"`},
		{"a bad cluster DNS address is refused", Config{InstanceID: "n", ClusterDNS: []string{"10.96.0.10", "dns"}}, "ClusterDNS"},
		{"a parallel-pull cap needs parallel pulls", Config{InstanceID: "n", MaxParallelImagePulls: 3}, "needs SerializeImagePulls false"},
		{"a parallel-pull cap with parallel pulls is valid", Config{InstanceID: "n", SerializeImagePulls: ptr(false), MaxParallelImagePulls: 3}, ""},
		{"a negative parallel-pull cap is refused", Config{InstanceID: "n", SerializeImagePulls: ptr(false), MaxParallelImagePulls: -1}, "must not be negative"},
		{"a pull backoff above its maximum is refused", Config{InstanceID: "n", ImagePullBackOff: time.Hour}, "exceeds ImagePullMaxBackOff"},
		{"a negative pull backoff is refused", Config{InstanceID: "n", ImagePullBackOff: -time.Second}, "ImagePullBackOff must not be negative"},
		{"a relative seccomp root is refused", Config{InstanceID: "n", SeccompProfileRoot: "seccomp"}, "SeccompProfileRoot"},
		{"negative node memory is refused", Config{InstanceID: "n", NodeMemoryBytes: -1}, "NodeMemoryBytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("Validate() = %v, want error containing %q", err, c.wantErr)
			}
		})
	}
}

func TestConfigConfinementDefaults(t *testing.T) {
	t.Parallel()
	got := Config{InstanceID: "n", RootDir: "/r"}.withDefaults()
	if got.CgroupDriver != "cgroupfs" || got.ClusterDomain != "cluster.local" || got.SeccompProfileRoot != "/r/seccomp" ||
		got.ImagePullBackOff != 10*time.Second || got.ImagePullMaxBackOff != 300*time.Second || !got.serializeImagePulls() {
		t.Errorf("defaults: %+v", got)
	}
}
