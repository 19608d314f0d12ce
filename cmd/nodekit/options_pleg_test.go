package main

import (
	"strings"
	"testing"

	"github.com/nodekit/nodekit/pleg"
)

func TestPLEGFlagPicksThePLEG(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		args    []string
		want    pleg.Kind
		wantErr string
	}{
		{name: "the default is the generic PLEG", want: pleg.KindGeneric},
		{name: "the flag picks the evented PLEG", args: []string{"--pleg", "evented"}, want: pleg.KindEvented},
		{name: "the config file picks it too", file: "pleg: evented\n", want: pleg.KindEvented},
		{name: "an unknown PLEG fails validation naming it", args: []string{"--pleg", "magic"}, want: "magic", wantErr: `kind "magic"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(t, tt.file, append(tt.args, "--runtime-endpoint", "unix:///x.sock", "--node-name", "n")...)
			if err != nil {
				t.Fatal(err)
			}
			cfg := o.config()
			if cfg.PLEG.Kind != tt.want {
				t.Errorf("PLEG.Kind = %q, want %q", cfg.PLEG.Kind, tt.want)
			}
			cfg, err = cfg.Complete()
			if err == nil {
				err = cfg.Validate()
			}
			switch {
			case err == nil && tt.wantErr != "":
				t.Errorf("Validate() = nil, want an error containing %q", tt.wantErr)
			case err != nil && (tt.wantErr == "" || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
