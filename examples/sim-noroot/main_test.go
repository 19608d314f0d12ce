package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs main instead of the tests when the test binary is run as
// the command (see runAsUser).
func TestMain(m *testing.M) {
	if os.Getenv("SIM_NOROOT_RUN_MAIN") == "1" {
		os.Args = append([]string{"sim-noroot"}, strings.Fields(os.Getenv("SIM_NOROOT_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// nobody is the ordinary user the command runs as when the test runs as
// root.
const nobody = 65534

// The command runs its pod as an ordinary user, every file it writes in
// its own directory: as user nobody when the test is root, as the test's
// user otherwise.
func TestTheAgentRunsAPodAsAnOrdinaryUser(t *testing.T) {
	base := t.TempDir()
	if err := os.Chmod(filepath.Dir(base), 0o755); err != nil { // t.TempDir's parent is 0700
		t.Fatal(err)
	}
	dir := filepath.Join(base, "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "sim-noroot")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = []string{"SIM_NOROOT_RUN_MAIN=1", "SIM_NOROOT_ARGS=--until-running --root-dir " + dir, "HOME=" + dir, "TMPDIR=" + dir, "PATH=/usr/bin:/bin"}
	uid := os.Geteuid()
	if uid == 0 {
		if err := os.Chown(dir, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		uid = nobody
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sim-noroot as uid %d: %v\nstdout:\n%s\nstderr:\n%s", uid, err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "agent running as uid ") || !strings.Contains(out, "pod default/hello-") || !strings.Contains(out, " Running") {
		t.Fatalf("sim-noroot did not report its pod running:\n%s\nstderr:\n%s", out, stderr.String())
	}
	if want := "agent running as uid " + strconv.Itoa(uid) + " "; !strings.Contains(out, want) {
		t.Fatalf("sim-noroot output %q does not contain %q", out, want)
	}
	var files int
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
			t.Errorf("%s belongs to uid %d, want %d", path, st.Uid, uid)
		}
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Fatalf("the agent wrote %d entries in its directory, want its node directory and manifests", files)
	}
}
