package pleg

import (
	"testing"
	"time"
)

func TestConfigValidateKindAndEvented(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "the generic kind is valid", cfg: Config{Kind: KindGeneric}},
		{name: "the evented kind with defaults is valid", cfg: Config{Kind: KindEvented}},
		{name: "an unknown kind is rejected", cfg: Config{Kind: "magic"}, wantErr: `pleg: kind "magic": want "generic" or "evented"`},
		{
			name: "a negative reconcile period is rejected", cfg: Config{Evented: EventedConfig{ReconcilePeriod: -time.Second}},
			wantErr: "pleg: evented reconcilePeriod -1s must not be negative",
		},
		{
			name: "a negative fallback count is rejected", cfg: Config{Evented: EventedConfig{FallbackAfter: -1}},
			wantErr: "pleg: evented fallbackAfter -1 must not be negative",
		},
		{
			name: "a maximum backoff below the first is rejected", cfg: Config{Evented: EventedConfig{ReconnectBackoff: time.Minute}},
			wantErr: "pleg: evented maxReconnectBackoff 10s must not be shorter than reconnectBackoff 1m0s",
		},
	}
	for _, tt := range tests {
		if got := errString(tt.cfg.Validate()); got != tt.wantErr {
			t.Errorf("%s: Validate() = %q, want %q", tt.name, got, tt.wantErr)
		}
	}
	d := Config{}.withDefaults()
	if d.Kind != KindGeneric || d.Evented.ReconcilePeriod != 300*time.Second || d.Evented.FallbackAfter != 3 ||
		d.Evented.WaiterRelistDelay != 50*time.Millisecond {
		t.Errorf("defaults = %+v", d)
	}
}
