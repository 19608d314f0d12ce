package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSandboxWaitsOfSumsEachPodsSandboxWaits(t *testing.T) {
	log := `I1202 13:04:00.100000   26425 startlimit.go:95] "Waited for a runtime start slot" logger="runtime" operation="run_podsandbox" wait="26.5s" limit=8 pod="default/pb-1" podUID="u1"
I1202 13:04:00.200000   26425 startlimit.go:95] "Waited for a runtime start slot" logger="runtime" operation="create_container" wait="1s" limit=8 pod="default/pb-1" podUID="u1" container="main"
I1202 13:04:00.300000   26425 sync.go:10] "Syncing" pod="default/pb-2" wait="9s"
I1202 13:04:01.100000   26425 startlimit.go:95] "Waited for a runtime start slot" logger="runtime" operation="run_podsandbox" wait="250ms" limit=8 pod="default/pb-2" podUID="u2"
I1202 13:04:02.100000   26425 startlimit.go:95] "Waited for a runtime start slot" logger="runtime" operation="run_podsandbox" wait="1.5s" limit=8 pod="default/pb-1" podUID="u1"
`
	path := filepath.Join(t.TempDir(), "nodekit.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := sandboxWaitsOf(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["pb-1"] != 28*time.Second || got["pb-2"] != 250*time.Millisecond {
		t.Fatalf("sandbox waits %v, want pb-1 28s (two sandbox calls, not the create) and pb-2 250ms", got)
	}
}

func TestSandboxWaitsOfRefusesALineWithoutItsWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodekit.log")
	line := `I1202 13:04:00.100000 1 x.go:1] "Waited for a runtime start slot" operation="run_podsandbox" pod="default/pb-1"` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sandboxWaitsOf(path); err == nil {
		t.Fatal("a line without its wait was read as no wait")
	}
}
