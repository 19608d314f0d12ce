package cri

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"

	"github.com/nodekit/nodekit/internal/mount"
)

func TestPathUnderTakesOnlySinglePathElements(t *testing.T) {
	cases := []struct {
		elems []string
		want  string // "" for no error
	}{
		{[]string{"pods", "0f3c-uid"}, ""},
		{[]string{"logs", "ns_name_..uid"}, ""},
		{[]string{"pods", ""}, "empty path element"},
		{[]string{"pods", "."}, "not a path element"},
		{[]string{"pods", ".."}, "not a path element"},
		{[]string{"pods", "x/../../../etc"}, "not a single path element"},
		{[]string{"pods", "a/b"}, "not a single path element"},
		{[]string{"pods", "/etc"}, "not a single path element"},
		{[]string{"pods", "a\x00b"}, "not a single path element"},
	}
	for _, tc := range cases {
		p, err := pathUnder("/var/lib/nodekit", tc.elems...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("pathUnder(%q): %v", tc.elems, err)
		case tc.want == "" && p != filepath.Join(append([]string{"/var/lib/nodekit"}, tc.elems...)...):
			t.Errorf("pathUnder(%q) = %s", tc.elems, p)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("pathUnder(%q) = %q, %v; want an error containing %q", tc.elems, p, err, tc.want)
		}
	}
	if _, err := pathUnder("", "pods"); err == nil {
		t.Error("pathUnder with no root: no error")
	}
}

// TestAPodUIDThatIsAPathMakesAndRemovesNothingOutsideTheRoot: a static
// pod's UID is outside input. Its pod and log directories would be
// <RootDir>/../somewhere; nothing may be created there, and the container
// GC of a pod labelled with that UID must not remove it.
func TestAPodUIDThatIsAPathMakesAndRemovesNothingOutsideTheRoot(t *testing.T) {
	e := newTestEnv(t)
	const uid = "x/../../../somewhere"
	outside := filepath.Join(filepath.Dir(e.cfg.RootDir), "somewhere")
	pod := newPod(uid, "a")
	pod.Name = "web"
	if res := e.sync(t, pod); res.Error() == nil {
		t.Error("SyncPod of a pod whose UID is a path: no error")
	}
	if _, err := os.Lstat(outside); err == nil {
		t.Fatalf("SyncPod made %s, outside the root directory", outside)
	}
	// A sandbox of that UID in the runtime (made by an older agent, say),
	// and a directory of value where its paths lead.
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := e.rs.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: uid},
		Labels:   e.m.sandboxLabels(pod),
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rs.StopPodSandbox(ctx, id); err != nil {
		t.Fatal(err)
	}
	err = e.m.GarbageCollect(ctx, func(types.UID) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "not a single path element") {
		t.Errorf("GarbageCollect: %v, want an error naming the bad UID", err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "x" {
		t.Fatalf("GarbageCollect removed %s, outside the root directory: %v", outside, err)
	}
}

// skipUnlessRoot skips a test that bind-mounts.
func skipUnlessRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("subPath mounts are bind mounts, which need root")
	}
}

// mustPodDir is the manager's directory of pod uid.
func mustPodDir(t *testing.T, m *Manager, uid types.UID) string {
	t.Helper()
	dir, err := m.podDir(uid)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// newSubPathPodDir is a pod directory whose subPath mounts are cleaned
// before the test's temporary directories are removed.
func newSubPathPodDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		if err := mount.CleanSubPaths(dir); err != nil {
			t.Errorf("clean subPath mounts: %v", err)
		}
	})
	return dir
}

// bindTestSubPath sets up sub of vol as the first mount of container "c"
// and returns the mount's host path.
func bindTestSubPath(t *testing.T, vol noderuntime.Volume, sub string) string {
	t.Helper()
	target, err := subPath(vol, sub, newSubPathPodDir(t), "c", "v", 0)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// sameFile reports whether a and b are the same file (after symlinks).
func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(sa, sb)
}

// TestTerminationMessageOfAPodWithAPathUIDReadsNoRelativeLog: the log path
// the runtime reports is relative to the pod's log directory; for a UID
// that makes no directory, it is not read (from the working directory).
func TestTerminationMessageOfAPodWithAPathUIDReadsNoRelativeLog(t *testing.T) {
	e := newTestEnv(t)
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("a", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("a", "0.log"), []byte("2026-01-01T00:00:00Z stderr F secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &runtimeapi.ContainerStatus{
		State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 1, LogPath: "a/0.log",
		Labels: map[string]string{
			noderuntime.LabelPodName: "web", noderuntime.LabelPodNamespace: "default", noderuntime.LabelPodUID: "x/../..",
		},
		Annotations: map[string]string{noderuntime.AnnotationTerminationMessagePolicy: string(corev1.TerminationMessageFallbackToLogsOnError)},
	}
	if msg := e.m.containerTerminationMessage(s); msg != "" {
		t.Fatalf("termination message %q, want none", msg)
	}
	if s.GetLogPath() != "a/0.log" {
		t.Fatal("the status was changed")
	}
	// A good UID reads its log.
	s.Labels[noderuntime.LabelPodUID] = "u1"
	dir, err := e.m.podLogDir("default", "web", "u1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "0.log"), []byte("2026-01-01T00:00:00Z stderr F bye\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := e.m.containerTerminationMessage(s); !strings.Contains(msg, "bye") {
		t.Fatalf("termination message %q, want the log's", msg)
	}
}
