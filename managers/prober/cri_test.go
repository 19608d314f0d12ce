package prober

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	criapi "k8s.io/cri-api/pkg/apis"
	criclient "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"
)

// fakeRuntimeService implements only ExecSync of a CRI runtime service.
type fakeRuntimeService struct {
	criapi.RuntimeService
	gotID  string
	stdout string
	err    error
}

func (f *fakeRuntimeService) ExecSync(_ context.Context, id string, _ []string, _ time.Duration) ([]byte, []byte, error) {
	f.gotID = id
	return []byte(f.stdout), []byte("stderr"), f.err
}

func TestCRIExec(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		id          string
		err         error
		wantID      string
		wantCode    int
		wantTimeout bool
		wantErr     bool
	}{
		{name: "a command that exits 0 returns code 0", id: "containerd://abc", wantID: "abc"},
		{name: "a bare ID is passed on as is", id: "abc", wantID: "abc"},
		{name: "a CodeExitError becomes its exit code", id: "containerd://abc", wantID: "abc", wantCode: 3,
			err: utilexec.CodeExitError{Err: errors.New("command 'check' exited with 3"), Code: 3}},
		{name: "a timeout wraps ErrExecTimeout", id: "cri-o://abc", wantID: "abc", wantTimeout: true, wantErr: true,
			err: fmt.Errorf("%w: \"check\" timed out after 1s", criclient.ErrCommandTimedOut)},
		{name: "any other error is returned", id: "containerd://abc", wantID: "abc", wantErr: true, err: errors.New("unavailable")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rs := &fakeRuntimeService{stdout: "out", err: tc.err}
			stdout, stderr, code, err := CRIExec{Service: rs}.ExecSync(context.Background(), tc.id, []string{"check"}, time.Second)
			if rs.gotID != tc.wantID {
				t.Errorf("runtime got ID %q, want %q", rs.gotID, tc.wantID)
			}
			if (err != nil) != tc.wantErr || errors.Is(err, ErrExecTimeout) != tc.wantTimeout {
				t.Errorf("error %v, want error %v (timeout %v)", err, tc.wantErr, tc.wantTimeout)
			}
			if err == nil && (code != tc.wantCode || string(stdout) != "out" || string(stderr) != "stderr") {
				t.Errorf("got %q %q code %d, want \"out\" \"stderr\" code %d", stdout, stderr, code, tc.wantCode)
			}
		})
	}
}
