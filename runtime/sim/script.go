package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AnnotationPrefix starts every annotation that scripts a simulated
// container: sim.nodekit.io/<container>.<field>.
const AnnotationPrefix = "sim.nodekit.io/"

// Fields of the scripting annotations; see the package documentation.
const (
	FieldExitAfter    = "exit-after"
	FieldExitCode     = "exit-code"
	FieldCrashOnStart = "crash-on-start"
	FieldStartDelay   = "start-delay"
	FieldIgnoreTerm   = "ignore-term"
	FieldExec         = "exec"
	FieldExecAfter    = "exec-after"
)

// Exit codes of simulated processes stopped by StopContainer.
const (
	// ExitCodeTerm is the exit code of a process that handled SIGTERM.
	ExitCodeTerm = 0
	// ExitCodeKilled is the exit code of a process killed by SIGKILL.
	ExitCodeKilled = 137
)

// script is the scripted behaviour of one container.
type script struct {
	// exitAfter, when hasExit, is how long after its start the container exits.
	exitAfter time.Duration
	hasExit   bool
	// exitCode, when exitCodeSet, is the code of a scripted exit or crash.
	exitCode    int32
	exitCodeSet bool
	// crashOnStart makes the container exit as soon as it started.
	crashOnStart bool
	// startDelay is how long StartContainer blocks on the clock.
	startDelay time.Duration
	// ignoreTerm makes StopContainer wait its whole timeout.
	ignoreTerm bool
	// exec is the ExecSync result; execAfter, when hasExecAfter, replaces it
	// once the container has run for execAfterDelay.
	exec           execResult
	execAfter      execResult
	execAfterDelay time.Duration
	hasExecAfter   bool
}

// execResult is a scripted ExecSync outcome.
type execResult struct {
	code   int32
	stdout string
}

// parseScript reads the scripting annotations of the named container from a
// sandbox's annotations. An unknown field or a bad value is an error naming
// the annotation.
func parseScript(annotations map[string]string, container string) (script, error) {
	var s script
	prefix := AnnotationPrefix + container + "."
	for key, value := range annotations {
		field, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		var err error
		switch field {
		case FieldExitAfter:
			s.exitAfter, err = parseDuration(value)
			s.hasExit = true
		case FieldExitCode:
			s.exitCode, err = parseCode(value)
			s.exitCodeSet = true
		case FieldCrashOnStart:
			s.crashOnStart, err = strconv.ParseBool(value)
		case FieldStartDelay:
			s.startDelay, err = parseDuration(value)
		case FieldIgnoreTerm:
			s.ignoreTerm, err = strconv.ParseBool(value)
		case FieldExec:
			s.exec, err = parseExec(value)
		case FieldExecAfter:
			s.execAfterDelay, s.execAfter, err = parseExecAfter(value)
			s.hasExecAfter = true
		default:
			err = fmt.Errorf("unknown field %q (known: %s, %s, %s, %s, %s, %s, %s)", field,
				FieldExitAfter, FieldExitCode, FieldCrashOnStart, FieldStartDelay, FieldIgnoreTerm, FieldExec, FieldExecAfter)
		}
		if err != nil {
			return script{}, fmt.Errorf("annotation %s=%q: %w", key, value, err)
		}
	}
	return s, nil
}

// parseDuration parses a non-negative Go duration.
func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 5s: %w", err)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %s must not be negative", d)
	}
	return d, nil
}

// parseCode parses an exit code in [0, 255].
func parseCode(v string) (int32, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 || n > 255 {
		return 0, fmt.Errorf("want an exit code from 0 to 255")
	}
	return int32(n), nil
}

// parseExec parses "<exit code>[:stdout]".
func parseExec(v string) (execResult, error) {
	code, out, _ := strings.Cut(v, ":")
	n, err := parseCode(code)
	if err != nil {
		return execResult{}, fmt.Errorf("want <exit code>[:stdout]: %w", err)
	}
	return execResult{code: n, stdout: out}, nil
}

// parseExecAfter parses "<duration>=<exit code>[:stdout]".
func parseExecAfter(v string) (time.Duration, execResult, error) {
	d, res, ok := strings.Cut(v, "=")
	if !ok {
		return 0, execResult{}, fmt.Errorf("want <duration>=<exit code>[:stdout]")
	}
	delay, err := parseDuration(d)
	if err != nil {
		return 0, execResult{}, err
	}
	r, err := parseExec(res)
	return delay, r, err
}

// execResultAt is the ExecSync result after the container ran for ran.
func (s script) execResultAt(ran time.Duration) execResult {
	if s.hasExecAfter && ran >= s.execAfterDelay {
		return s.execAfter
	}
	return s.exec
}

// scriptedExitCode is the code of a scripted exit: exit-code when set, else
// 1 for a crash on start and 0 for an exit after a duration.
func (s script) scriptedExitCode() int32 {
	switch {
	case s.exitCodeSet:
		return s.exitCode
	case s.crashOnStart:
		return 1
	}
	return 0
}
