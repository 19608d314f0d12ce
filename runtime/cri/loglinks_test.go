package cri

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestContainerLogPathsAndLinks checks the kubelet's layout: the sandbox's
// log directory under PodLogsDir, <container>/<restartCount>.log, a link in
// ContainerLogsDir to each started container's log file (none when the
// runtime wrote no file), and both gone once the pod is collected.
func TestContainerLogPathsAndLinks(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.PodLogsDir = filepath.Join(t.TempDir(), "pods") })
	pod := newPod("u1", "a", "b")
	podDir := filepath.Join(e.cfg.PodLogsDir, "default_web-u1_u1")
	logA := filepath.Join(podDir, "a", "0.log")
	// The fake runtime writes no log: write a's as containerd would.
	e.rs.onCreate = func(cfg *runtimeapi.ContainerConfig, sb *runtimeapi.PodSandboxConfig) {
		if cfg.GetMetadata().GetName() == "a" {
			if err := os.WriteFile(filepath.Join(sb.GetLogDirectory(), cfg.GetLogPath()), []byte("hello\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	if got := e.rs.sandboxConfigs[0].GetLogDirectory(); got != podDir {
		t.Errorf("sandbox log directory = %q, want %q", got, podDir)
	}
	if got := e.rs.lastContainerConfig(t).GetLogPath(); got != filepath.Join("b", "0.log") {
		t.Errorf("container log path = %q, want b/0.log", got)
	}
	idA, idB := e.containerIDOf(t, pod, "a"), e.containerIDOf(t, pod, "b")
	linkA := filepath.Join(e.cfg.ContainerLogsDir, "web-u1_default_a-"+idA+".log")
	if got, err := os.Readlink(linkA); err != nil || got != logA {
		t.Fatalf("link of a = %q, %v; want %q", got, err, logA)
	}
	if b, err := os.ReadFile(linkA); err != nil || string(b) != "hello\n" {
		t.Errorf("read through the link = %q, %v", b, err)
	}
	linkB := filepath.Join(e.cfg.ContainerLogsDir, "web-u1_default_b-"+idB+".log")
	if _, err := os.Lstat(linkB); !os.IsNotExist(err) {
		t.Errorf("a link was made to b's missing log file: %v", err)
	}
	if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), nil); err != nil {
		t.Fatal(err)
	}
	if err := e.m.GarbageCollect(context.Background(), func(uid types.UID) bool { return uid == pod.UID }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(linkA); !os.IsNotExist(err) {
		t.Errorf("link of a removed container is still there: %v", err)
	}
	if _, err := os.Stat(podDir); !os.IsNotExist(err) {
		t.Errorf("log directory of a removed pod is still there: %v", err)
	}
}

// TestLogLinkNameIsCut checks that a link's name stays within ext4's 255.
func TestLogLinkNameIsCut(t *testing.T) {
	e := newTestEnv(t)
	link := e.m.logLinkPath(strings.Repeat("p", 200), "ns", "c", strings.Repeat("f", 64))
	if n := len(filepath.Base(link)); n != 255 || !strings.HasSuffix(link, ".log") {
		t.Errorf("link name %q has %d characters, want 255 ending in .log", filepath.Base(link), n)
	}
}

// TestGarbageCollectRemovesDeadLogLinks checks the sweep of links whose
// log file is gone: removed for exited or unknown containers, kept for a
// running one (its log may be in rotation) and for files that are no link.
func TestGarbageCollectRemovesDeadLogLinks(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a", "b")
	pod.Name = "web" // no dash: the fake's container IDs hold the pod's name
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	idA, idB := e.containerIDOf(t, pod, "a"), e.containerIDOf(t, pod, "b")
	e.rs.setContainer(t, idB, runtimeapi.ContainerState_CONTAINER_EXITED, 0, e.clk.Now())
	dir := e.cfg.ContainerLogsDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(t.TempDir(), "gone.log")
	links := map[string]bool{ // name -> kept
		"web_default_a-" + idA + ".log":      true,
		"web_default_b-" + idB + ".log":      false,
		"old_default_c-0123456789abcdef.log": false,
	}
	for name := range links {
		if err := os.Symlink(gone, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	plain := filepath.Join(dir, "notalink-0123456789.log")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links[filepath.Base(plain)] = true
	if err := e.m.GarbageCollect(context.Background(), func(types.UID) bool { return false }); err != nil {
		t.Fatal(err)
	}
	for name, kept := range links {
		_, err := os.Lstat(filepath.Join(dir, name))
		if kept != (err == nil) {
			t.Errorf("%s: kept = %v, want %v", name, err == nil, kept)
		}
	}
}
