package nodestatus

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // "" means valid
	}{
		{"a node name alone is valid", Config{NodeName: "node-1"}, ""},
		{"a loopback node IP is accepted", Config{NodeName: "n", NodeIP: "127.0.0.1"}, ""},
		{"an IPv6 node IP is accepted", Config{NodeName: "n", NodeIP: "fd00::1"}, ""},
		{"the zero config lacks a node name", Config{}, "nodeName is required"},
		{"an upper-case node name is refused", Config{NodeName: "Node_1"}, "nodeName"},
		{"a host name longer than a label value is refused", Config{NodeName: "n", Hostname: strings.Repeat("h", 64)}, "hostname"},
		{"a node IP must be an IP", Config{NodeName: "n", NodeIP: "host"}, "not an IP address"},
		{"the unspecified address is refused", Config{NodeName: "n", NodeIP: "0.0.0.0"}, "cannot be a node's address"},
		{"a bad label key is refused", Config{NodeName: "n", Labels: map[string]string{"a b": "c"}}, "label key"},
		{"a bad label value is refused", Config{NodeName: "n", Labels: map[string]string{"a": "b c"}}, "label \"a\" value"},
		{"negative max pods are refused", Config{NodeName: "n", MaxPods: -1}, "maxPods"},
		{"a port above 65535 is refused", Config{NodeName: "n", KubeletPort: 70000}, "kubeletPort"},
		{"a negative update frequency is refused", Config{NodeName: "n", StatusUpdateFrequency: -time.Second}, "statusUpdateFrequency"},
		{"a lease duration in fractions of seconds is refused", Config{NodeName: "n", LeaseDuration: 1500 * time.Millisecond}, "whole seconds"},
		{"a renew interval as long as the lease is refused", Config{NodeName: "n", LeaseDuration: 10 * time.Second, RenewInterval: 10 * time.Second}, "renewInterval"},
		{"a percentage above 100 is refused", Config{NodeName: "n", Pressure: Thresholds{PIDAvailablePercent: 101}}, "pidAvailablePercent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	got := Config{NodeName: "node-1"}.withDefaults()
	want := Config{
		NodeName: "node-1", Hostname: "node-1", MaxPods: 110, RootDir: "/var/lib/nodekit",
		KubeletPort: 10250, AgentVersion: "v1.37.2+nodekit",
		StatusUpdateFrequency: 10 * time.Second, StatusReportFrequency: 5 * time.Minute,
		LeaseDuration: 40 * time.Second, RenewInterval: 10 * time.Second,
		Pressure: Thresholds{MemoryAvailableBytes: 100 << 20, DiskAvailablePercent: 10, InodesFreePercent: 5, PIDAvailablePercent: 10},
	}
	if got.Labels != nil || got.NodeIP != "" {
		t.Errorf("defaults set labels %v or node IP %q", got.Labels, got.NodeIP)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("withDefaults() = %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the defaults are invalid: %v", err)
	}
	if r := (Config{NodeName: "n", LeaseDuration: 60 * time.Second}).withDefaults().RenewInterval; r != 15*time.Second {
		t.Errorf("renewInterval for a 60s lease = %s, want 15s", r)
	}
}
