package prober

import (
	"context"
	"errors"
	"github.com/nodekit/nodekit/internal/expansion"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// errNoExecRunner is the error of exec probes when the Prober has no
// ExecRunner.
var errNoExecRunner = errors.New("no exec runner")

// probeExec runs an exec probe: exit code 0 succeeds, any other fails with
// the command's output (stdout then stderr, at most 10KiB); a timeout fails;
// any other error is an error.
func probeExec(ctx context.Context, runner ExecRunner, containerID string, cmd []string, timeout time.Duration) (outcome, string, error) {
	if runner == nil {
		return outcomeUnknown, "", errNoExecRunner
	}
	stdout, stderr, code, err := runner.ExecSync(ctx, containerID, cmd, timeout)
	if err != nil {
		if errors.Is(err, ErrExecTimeout) {
			return outcomeFailure, err.Error(), nil
		}
		return outcomeUnknown, "", err
	}
	output := limitOutput(stdout, stderr)
	if code != 0 {
		return outcomeFailure, output, nil
	}
	return outcomeSuccess, output, nil
}

// limitOutput joins the outputs, cut to maxOutput bytes.
func limitOutput(parts ...[]byte) string {
	var b strings.Builder
	for _, part := range parts {
		if room := maxOutput - b.Len(); len(part) > room {
			part = part[:room]
		}
		b.Write(part)
	}
	return b.String()
}

// expandCommand replaces $(VAR) references to the container's env values in
// cmd, as the kubelet does for exec probes (values from sources such as
// secrets are not known here and expand to the empty string, as upstream).
func expandCommand(cmd []string, env []corev1.EnvVar) []string {
	if len(env) == 0 {
		return cmd
	}
	out := make([]string, len(cmd))
	for i, arg := range cmd {
		out[i] = expand(arg, func(name string) (string, bool) {
			for j := len(env) - 1; j >= 0; j-- {
				if env[j].Name == name {
					return env[j].Value, true
				}
			}
			return "", false
		})
	}
	return out
}

// expand replaces each $(VAR) in s with lookup(VAR), as the kubelet does.
func expand(s string, lookup func(string) (string, bool)) string {
	return expansion.Expand(s, lookup)
}
