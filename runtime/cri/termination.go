package cri

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Limits of a termination message, as the kubelet has them.
const (
	// maxTerminationMessageLength is how much of the message file is read
	// (its last bytes).
	maxTerminationMessageLength = 4096
	// maxTerminationMessageLogLines and maxTerminationMessageLogLength bound
	// the log tail that FallbackToLogsOnError uses.
	maxTerminationMessageLogLines  = 80
	maxTerminationMessageLogLength = 2048
	// logTailWindow is how much of the end of a log file is scanned for
	// those lines.
	logTailWindow = 256 * 1024
)

// terminationMessage is what an exited container left for its status: the
// end of the file behind its terminationMessagePath or, under
// FallbackToLogsOnError when that is empty and the container failed, the
// tail of its log. podLogDir resolves a log path that the runtime reports
// relative to the sandbox's log directory.
func terminationMessage(s *runtimeapi.ContainerStatus, podLogDir string) string {
	a := s.GetAnnotations()
	fallback := corev1.TerminationMessagePolicy(a[noderuntime.AnnotationTerminationMessagePolicy]) == corev1.TerminationMessageFallbackToLogsOnError &&
		s.GetExitCode() != 0 && s.GetReason() != "ContainerCannotRun"
	msg, readLogs := readTerminationMessageFile(s.GetMounts(), a[noderuntime.AnnotationTerminationMessagePath], fallback)
	if !readLogs {
		return msg
	}
	path := s.GetLogPath()
	if path == "" {
		return ""
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(podLogDir, path)
	}
	return logTail(path)
}

// readTerminationMessageFile reads the host file mounted at path in the
// container, and reports whether the log should be read instead.
func readTerminationMessageFile(mounts []*runtimeapi.Mount, path string, fallback bool) (string, bool) {
	if path == "" {
		return "", fallback
	}
	for _, mnt := range mounts {
		if mnt.GetContainerPath() != path {
			continue
		}
		data, err := readTail(mnt.GetHostPath(), maxTerminationMessageLength)
		if errors.Is(err, os.ErrNotExist) {
			return "", fallback
		}
		if err != nil {
			return fmt.Sprintf("Error on reading termination log %s: %v", mnt.GetHostPath(), err), false
		}
		return string(data), fallback && len(data) == 0
	}
	return "", fallback
}

// readTail returns the last max bytes of a file.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if off := info.Size() - max; off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// logTail returns the content of the last lines of a CRI log file
// ("<time> <stream> <P|F> <content>" per line), at most
// maxTerminationMessageLogLines lines and the last
// maxTerminationMessageLogLength bytes of them.
func logTail(path string) string {
	data, err := readTail(path, logTailWindow)
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if info, err := os.Stat(path); err == nil && info.Size() > logTailWindow && len(lines) > 0 {
		lines = lines[1:] // the first line was cut
	}
	if len(lines) > maxTerminationMessageLogLines {
		lines = lines[len(lines)-maxTerminationMessageLogLines:]
	}
	var out []byte
	for _, line := range lines {
		parts := bytes.SplitN(line, []byte(" "), 4)
		if len(parts) < 3 {
			continue
		}
		var content []byte
		if len(parts) == 4 {
			content = parts[3]
		}
		out = append(out, content...)
		if string(parts[2]) != "P" {
			out = append(out, '\n')
		}
	}
	if len(out) > maxTerminationMessageLogLength {
		out = out[len(out)-maxTerminationMessageLogLength:]
	}
	return string(out)
}
