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

func TestParseFlagsFirst(t *testing.T) {
	base := []string{"--kubelet=k", "--nodekit=n", "--endpoint=unix:///c.sock", "--cgroup-root=/pb", "--work=/w"}
	if o, err := parseFlags(base); err != nil || o.first != "kubelet" {
		t.Fatalf("default first %q, err %v; want kubelet", o.first, err)
	}
	if o, err := parseFlags(append(base, "--first=nodekit")); err != nil || o.first != "nodekit" {
		t.Fatalf("first %q, err %v; want nodekit", o.first, err)
	}
	if _, err := parseFlags(append(base, "--first=crio")); err == nil || !strings.Contains(err.Error(), "crio") {
		t.Fatalf("--first=crio: err %v, want one naming it", err)
	}
}
