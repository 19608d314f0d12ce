package main

import (
	"testing"
	"time"
)

func TestPodCheckpointFlags(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantOff     bool
		wantTimeout time.Duration
	}{
		{name: "the checkpoint is on by default with a 10s timeout", wantTimeout: 10 * time.Second},
		{name: "--pod-checkpoint=false turns it off", args: []string{"--pod-checkpoint=false"}, wantOff: true, wantTimeout: 10 * time.Second},
		{name: "--pod-checkpoint-timeout sets the wait", args: []string{"--pod-checkpoint-timeout", "3s"}, wantTimeout: 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(t, "", tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			cfg := o.config()
			if cfg.DisablePodCheckpoint != tt.wantOff || cfg.APISource.OfflineAfter != tt.wantTimeout {
				t.Fatalf("DisablePodCheckpoint %v OfflineAfter %s, want %v %s", cfg.DisablePodCheckpoint, cfg.APISource.OfflineAfter, tt.wantOff, tt.wantTimeout)
			}
			done, err := cfg.Complete()
			if err != nil {
				t.Fatal(err)
			}
			if got := done.APISource.CheckpointDir != ""; got == tt.wantOff {
				t.Fatalf("completed CheckpointDir %q with the checkpoint off=%v", done.APISource.CheckpointDir, tt.wantOff)
			}
		})
	}
}
