package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseFlagsNodekitFlags(t *testing.T) {
	base := []string{"--kubelet=k", "--nodekit=n", "--endpoint=unix:///c.sock", "--cgroup-root=/pb", "--work=/w"}
	o, err := parseFlags(append(base, "--nodekit-flags", "--max-parallel-starts=8, --v=2"))
	if err != nil || !slices.Equal(o.nodekitFlags, []string{"--max-parallel-starts=8", "--v=2"}) {
		t.Fatalf("nodekitFlags %q, err %v", o.nodekitFlags, err)
	}
	if _, err := parseFlags(append(base, "--nodekit-flags", "max-parallel-starts=8")); err == nil || !strings.Contains(err.Error(), "max-parallel-starts=8") {
		t.Fatalf("a flag without --: err %v, want one naming it", err)
	}
}
