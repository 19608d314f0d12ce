package main

import (
	"strings"
	"testing"
	"time"
)

func TestPodCheckpointFlags(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantOff     bool
		wantObjects bool
		wantTimeout time.Duration
	}{
		{name: "the pod checkpoint is on by default with a 10s timeout, the object checkpoint off", wantTimeout: 10 * time.Second},
		{name: "--pod-checkpoint=false turns it off", args: []string{"--pod-checkpoint=false"}, wantOff: true, wantTimeout: 10 * time.Second},
		{name: "--pod-checkpoint-timeout sets the wait", args: []string{"--pod-checkpoint-timeout", "3s"}, wantTimeout: 3 * time.Second},
		{name: "--pod-checkpoint-objects turns on the object checkpoint", args: []string{"--pod-checkpoint-objects"}, wantObjects: true, wantTimeout: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(t, "", tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			cfg := o.config()
			if cfg.PodCheckpointObjects != tt.wantObjects {
				t.Fatalf("PodCheckpointObjects %v, want %v", cfg.PodCheckpointObjects, tt.wantObjects)
			}
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

func TestManifestURLFlags(t *testing.T) {
	o, err := parse(t, "", "--manifest-url", "https://cfg.example/pods", "--manifest-url-header", "Authorization:Bearer x, X-A:1",
		"--manifest-url-header", "X-A:2", "--http-check-frequency", "5s")
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.config()
	h := cfg.HTTPSource
	if h.URL != "https://cfg.example/pods" || h.CheckPeriod != 5*time.Second {
		t.Fatalf("HTTPSource = %+v", h)
	}
	if h.Header.Get("Authorization") != "Bearer x" || strings.Join(h.Header.Values("X-A"), ",") != "1,2" {
		t.Fatalf("headers = %v, want Authorization and X-A [1 2]", h.Header)
	}
	if _, err := parse(t, "", "--manifest-url-header", "novalue"); err == nil {
		t.Fatal("a header without a colon was accepted")
	}
	done, err := cfg.Complete()
	if err != nil || done.HTTPSource.NodeName == "" {
		t.Fatalf("completed HTTPSource node %q err %v", done.HTTPSource.NodeName, err)
	}
	if err := done.Validate(); err != nil && strings.Contains(err.Error(), "http source") {
		t.Fatalf("a valid manifest URL was refused: %v", err)
	}
	cfg.HTTPSource.URL = "ftp://x/pods"
	done, _ = cfg.Complete()
	if err := done.Validate(); err == nil || !strings.Contains(err.Error(), "http source") {
		t.Fatalf("Validate with an ftp URL = %v, want an http source error", err)
	}
}
