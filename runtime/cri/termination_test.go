package cri

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// writeCRILog writes lines in the CRI log format to the container's log.
func writeCRILog(t *testing.T, e *testEnv, id string, lines ...string) {
	t.Helper()
	e.rs.Lock()
	path := e.rs.Containers[id].LogPath
	e.rs.Unlock()
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "2026-01-02T03:04:05.000000000Z stdout %s\n", l)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTerminationMessage(t *testing.T) {
	long := strings.Repeat("x", 5000) + "END"
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprintf("F line %d", i))
	}
	cases := []struct {
		name     string
		policy   corev1.TerminationMessagePolicy
		file     string
		logLines []string
		exitCode int32
		// runtimeMsg is the runtime's own message for the exit.
		runtimeMsg string
		want       func(string) bool
		wantText   string
	}{
		{name: "the file the container wrote is the message", policy: corev1.TerminationMessageReadFile,
			file: "bye now", exitCode: 1, wantText: "bye now"},
		{name: "the runtime's message comes first", policy: corev1.TerminationMessageReadFile,
			file: "bye now", exitCode: 137, runtimeMsg: "OOMKilled", wantText: "OOMKilled: bye now"},
		{name: "an empty file under File gives no message even on failure", policy: corev1.TerminationMessageReadFile,
			logLines: []string{"F boom"}, exitCode: 1, wantText: ""},
		{name: "FallbackToLogsOnError reads the log tail of a failed container", policy: corev1.TerminationMessageFallbackToLogsOnError,
			logLines: []string{"F first", "P part", "F ial", "F last"}, exitCode: 2, wantText: "first\npartial\nlast\n"},
		{name: "FallbackToLogsOnError reads no log after a success", policy: corev1.TerminationMessageFallbackToLogsOnError,
			logLines: []string{"F fine"}, exitCode: 0, wantText: ""},
		{name: "FallbackToLogsOnError prefers a non-empty file", policy: corev1.TerminationMessageFallbackToLogsOnError,
			file: "from file", logLines: []string{"F from log"}, exitCode: 3, wantText: "from file"},
		{name: "only the last 4096 bytes of the file are kept", policy: corev1.TerminationMessageReadFile,
			file: long, exitCode: 1, want: func(s string) bool { return len(s) == 4096 && strings.HasSuffix(s, "END") }},
		{name: "the log tail is at most 80 lines", policy: corev1.TerminationMessageFallbackToLogsOnError,
			logLines: many, exitCode: 1, want: func(s string) bool {
				return strings.HasPrefix(s, "line 20\n") && strings.HasSuffix(s, "line 99\n") && strings.Count(s, "\n") == 80
			}},
		{name: "the log tail is at most 2048 bytes", policy: corev1.TerminationMessageFallbackToLogsOnError,
			logLines: []string{"F " + long}, exitCode: 1, want: func(s string) bool { return len(s) == 2048 && strings.HasSuffix(s, "END\n") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			pod := newPod("u1", "a")
			pod.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
			pod.Spec.Containers[0].TerminationMessagePolicy = tc.policy
			if err := e.sync(t, pod).Error(); err != nil {
				t.Fatal(err)
			}
			mount := mountsByPath(e.rs.lastContainerConfig(t))["/dev/termination-log"]
			dir := filepath.Join(e.cfg.RootDir, "pods", "u1", "containers", "a")
			if mount == nil || filepath.Dir(mount.GetHostPath()) != dir {
				t.Fatalf("termination message mount = %v, want a file in %s", mount, dir)
			}
			if info, err := os.Stat(mount.GetHostPath()); err != nil || info.Mode().Perm() != 0o666 {
				t.Fatalf("termination message file: %v, %v; want mode 0666", info, err)
			}
			if err := os.WriteFile(mount.GetHostPath(), []byte(tc.file), 0o666); err != nil {
				t.Fatal(err)
			}
			id := e.containerIDOf(t, pod, "a")
			if tc.logLines != nil {
				writeCRILog(t, e, id, tc.logLines...)
			}
			e.rs.setContainer(t, id, runtimeapi.ContainerState_CONTAINER_EXITED, tc.exitCode, e.clk.Now())
			e.rs.Lock()
			e.rs.Containers[id].Message = tc.runtimeMsg
			e.rs.Unlock()
			got := e.status(t, pod).FindContainerStatusByName("a").Message
			if tc.want != nil {
				if !tc.want(got) {
					t.Fatalf("message (%d bytes) %q does not hold", len(got), got)
				}
				return
			}
			if got != tc.wantText {
				t.Fatalf("message = %q, want %q", got, tc.wantText)
			}
		})
	}
}

func TestTerminationMessageOfAMissingFileIsEmpty(t *testing.T) {
	s := &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 1, Message: "oom",
		Annotations: map[string]string{"io.kubernetes.container.terminationMessagePath": "/m"},
		Mounts:      []*runtimeapi.Mount{{ContainerPath: "/m", HostPath: filepath.Join(t.TempDir(), "missing")}}}
	if got := terminationMessage(s, ""); got != "" {
		t.Fatalf("a missing file gives %q, want no message", got)
	}
}
