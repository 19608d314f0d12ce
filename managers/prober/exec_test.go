package prober

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestExecProbe(t *testing.T) {
	t.Parallel()
	errDial := errors.New("connection refused")
	cases := []struct {
		name    string
		result  execResult
		nilExec bool
		want    outcome
		output  string
		wantErr bool
	}{
		{name: "exit code 0 succeeds with the output", result: execResult{out: "ok"}, want: outcomeSuccess, output: "ok"},
		{name: "a non-zero exit code fails with the output", result: execResult{out: "bad", code: 2}, want: outcomeFailure, output: "bad"},
		{name: "a timeout fails with the error as output", result: execResult{err: ErrExecTimeout}, want: outcomeFailure, output: "command timed out"},
		{name: "any other error is an error", result: execResult{err: errDial}, wantErr: true},
		{name: "no runner is an error", nilExec: true, wantErr: true},
		{name: "the output is cut to 10KiB", result: execResult{out: strings.Repeat("y", 11<<10), code: 1}, want: outcomeFailure, output: strings.Repeat("y", 10<<10)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeExec{}
			f.queue(tc.result)
			var runner ExecRunner = f
			if tc.nilExec {
				runner = nil
			}
			got, output, err := probeExec(context.Background(), runner, ctrID, []string{"check"}, time.Second)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (got != tc.want || output != tc.output) {
				t.Errorf("outcome %d %q, want %d %q", got, output, tc.want, tc.output)
			}
		})
	}
}

func TestLimitOutputJoinsStdoutAndStderr(t *testing.T) {
	t.Parallel()
	if got := limitOutput([]byte("out "), []byte("err")); got != "out err" {
		t.Errorf("limitOutput = %q, want %q", got, "out err")
	}
	long := []byte(strings.Repeat("a", 10<<10-1))
	if got := limitOutput(long, []byte("bc")); len(got) != 10<<10 || !strings.HasSuffix(got, "ab") {
		t.Errorf("limitOutput kept %d bytes ending %q, want 10240 ending \"ab\"", len(got), got[len(got)-2:])
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"A": "1", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	cases := []struct{ name, in, want string }{
		{"a plain string is kept", "plain", "plain"},
		{"a defined variable is replaced", "x$(A)y", "x1y"},
		{"a variable defined as empty is removed", "[$(EMPTY)]", "[]"},
		{"an undefined variable is kept", "$(B)", "$(B)"},
		{"$$ escapes a reference", "$$(A)", "$(A)"},
		{"an unterminated reference is kept", "$(A", "$(A"},
		{"a $ before another character is kept", "$A $", "$A $"},
	}
	for _, tc := range cases {
		if got := expand(tc.in, lookup); got != tc.want {
			t.Errorf("%s: expand(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestExpandCommandWithoutEnvKeepsTheCommand(t *testing.T) {
	t.Parallel()
	cmd := []string{"a", "$(B)"}
	if got := expandCommand(cmd, nil); &got[0] != &cmd[0] {
		t.Error("expandCommand copied a command it had nothing to expand in")
	}
	if got := expandCommand(cmd, []corev1.EnvVar{{Name: "B", Value: "b"}}); got[1] != "b" || cmd[1] != "$(B)" {
		t.Errorf("expandCommand = %q (input now %q), want [a b] and the input untouched", got, cmd)
	}
}
