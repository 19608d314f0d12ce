package cri

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Switches of FuzzTerminationMessage's flags byte.
const (
	tmFallback    = 1 << iota // terminationMessagePolicy FallbackToLogsOnError
	tmFailed                  // a non-zero exit code
	tmCannotRun               // the runtime's reason is ContainerCannotRun
	tmFileExists              // the message file exists on the host
	tmMounted                 // the message path is among the container's mounts
	tmLogRelative             // the runtime reports the log path relative to the pod's log directory
	tmLogMissing              // the log file does not exist
)

// wantLogTail is the termination message the kubelet takes from a whole
// CRI log: the content of its last 80 lines (a line with fewer than three
// fields skipped, a "P" line without its newline), then the last 2048 bytes.
func wantLogTail(log []byte) string {
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	lines = lines[max(0, len(lines)-maxTerminationMessageLogLines):]
	var b strings.Builder
	for _, l := range lines {
		f := strings.SplitN(l, " ", 4)
		if len(f) < 3 {
			continue
		}
		if len(f) == 4 {
			b.WriteString(f[3])
		}
		if f[2] != "P" {
			b.WriteByte('\n')
		}
	}
	s := b.String()
	return s[max(0, len(s)-maxTerminationMessageLogLength):]
}

// FuzzTerminationMessage feeds arbitrary message files and CRI logs (a
// log is its bytes repeated, to go past the scanned window) to
// terminationMessage under every policy, exit and mount combination. No
// panic; a message never exceeds the kubelet's 4096 bytes per container; a
// file's message is its last 4096 bytes; a log's is at most 80 lines and
// 2048 bytes, and exactly the kubelet's tail when the log fits the window;
// nothing is read from the log unless the policy, the exit and an empty
// file all call for it.
func FuzzTerminationMessage(f *testing.F) {
	line := func(s string) string { return "2026-12-05T10:11:12.123456789Z stderr " + s + "\n" }
	crilog := []byte(line("F panic: boom") + line("P partial ") + line("F line") + line("F goroutine 1 [running]:"))
	f.Add([]byte("connection refused to db:5432"), crilog, uint16(1), byte(tmFallback|tmFailed|tmFileExists|tmMounted))
	f.Add([]byte{}, crilog, uint16(1), byte(tmFallback|tmFailed|tmFileExists|tmMounted))
	f.Add([]byte{}, crilog, uint16(1), byte(tmFallback|tmFailed|tmMounted|tmLogRelative))
	f.Add([]byte{}, crilog, uint16(3000), byte(tmFallback|tmFailed|tmFileExists|tmMounted))
	f.Add([]byte{}, crilog, uint16(1), byte(tmFallback|tmFailed|tmCannotRun|tmFileExists|tmMounted))
	f.Add([]byte{}, crilog, uint16(1), byte(tmFallback|tmFileExists|tmMounted))
	f.Add(bytes.Repeat([]byte("0123456789"), 500), []byte{}, uint16(0), byte(tmFileExists|tmMounted))
	f.Add([]byte("x"), []byte("no fields\n\n \nP\n1 2 P\n1 2 F \n"), uint16(7), byte(tmFallback|tmFailed|tmFileExists))
	f.Add([]byte{}, bytes.Repeat([]byte("a"), 4000), uint16(100), byte(tmFallback|tmFailed|tmMounted|tmLogMissing))
	f.Fuzz(func(t *testing.T, file, logChunk []byte, repeat uint16, flags byte) {
		dir := t.TempDir()
		podLogDir := filepath.Join(dir, "pod-logs")
		if err := os.MkdirAll(podLogDir, 0o755); err != nil {
			t.Fatal(err)
		}
		log := bytes.Repeat(logChunk, int(repeat%4096))
		if len(log) > 2*logTailWindow {
			log = log[len(log)-2*logTailWindow:]
		}
		logPath := filepath.Join(podLogDir, "app", "0.log")
		if flags&tmLogMissing == 0 {
			if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(logPath, log, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		hostFile := filepath.Join(dir, "termination-log")
		if flags&tmFileExists != 0 {
			if err := os.WriteFile(hostFile, file, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		policy := corev1.TerminationMessageReadFile
		if flags&tmFallback != 0 {
			policy = corev1.TerminationMessageFallbackToLogsOnError
		}
		s := &runtimeapi.ContainerStatus{
			Annotations: map[string]string{
				noderuntime.AnnotationTerminationMessagePath:   "/dev/termination-log",
				noderuntime.AnnotationTerminationMessagePolicy: string(policy),
			},
			Mounts:  []*runtimeapi.Mount{{ContainerPath: "/etc/config", HostPath: dir}},
			LogPath: logPath,
		}
		if flags&tmMounted != 0 {
			s.Mounts = append(s.Mounts, &runtimeapi.Mount{ContainerPath: "/dev/termination-log", HostPath: hostFile})
		}
		if flags&tmFailed != 0 {
			s.ExitCode = 1
		}
		if flags&tmCannotRun != 0 {
			s.Reason = "ContainerCannotRun"
		}
		if flags&tmLogRelative != 0 {
			s.LogPath = filepath.Join("app", "0.log")
		}
		msg := terminationMessage(s, podLogDir)
		checkTerminationMessage(t, msg, file, log, flags)
	})
}

// checkTerminationMessage holds FuzzTerminationMessage's properties.
func checkTerminationMessage(t *testing.T, msg string, file, log []byte, flags byte) {
	t.Helper()
	if len(msg) > maxTerminationMessageLength {
		t.Fatalf("message of %d bytes, over the kubelet's %d per container", len(msg), maxTerminationMessageLength)
	}
	fromFile := flags&tmFileExists != 0 && flags&tmMounted != 0 && len(file) > 0
	readLogs := !fromFile && flags&tmFallback != 0 && flags&tmFailed != 0 && flags&tmCannotRun == 0
	switch {
	case fromFile:
		if want := file[max(0, len(file)-maxTerminationMessageLength):]; msg != string(want) {
			t.Fatalf("message %q, want the file's last %d bytes %q", msg, len(want), want)
		}
	case !readLogs:
		if msg != "" {
			t.Fatalf("message %q read when neither the file nor the log should give one (flags %#x)", msg, flags)
		}
	case flags&tmLogMissing != 0:
		if !strings.HasPrefix(msg, "Error on reading termination message from logs: ") {
			t.Fatalf("message %q for a missing log, want the kubelet's read error", msg)
		}
	default:
		if len(msg) > maxTerminationMessageLogLength || strings.Count(msg, "\n") > maxTerminationMessageLogLines {
			t.Fatalf("log tail of %d bytes and %d lines, over %d bytes or %d lines",
				len(msg), strings.Count(msg, "\n"), maxTerminationMessageLogLength, maxTerminationMessageLogLines)
		}
		if len(log) <= logTailWindow {
			if want := wantLogTail(log); msg != want {
				t.Fatalf("log tail %q, want %q", msg, want)
			}
		}
	}
}
