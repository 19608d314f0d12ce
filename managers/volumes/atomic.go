package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// The atomic writer's names inside a volume, as the kubelet's AtomicWriter
// uses them: the files of one version live in a timestamped directory
// (..2006_01_02_15_04_05.RANDOM), ..data is a symlink to the current one,
// and each top-level path of the payload is a symlink into ..data.
const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
	tsDirLayout    = "..2006_01_02_15_04_05."
	maxPathLength  = 4096
	maxFileLength  = 255
)

// File is one file of a payload the atomic writer projects into a volume.
type File struct {
	// Data is the file's content.
	Data []byte
	// Mode is the file's permission bits.
	Mode os.FileMode
	// FsUser, when set, owns the file (the kubelet sets it for
	// service-account tokens of pods that run as one user).
	FsUser *int64
}

// writeAtomic makes dir hold exactly payload (paths relative to dir) so
// that a reader never sees half an update: the files go into a new
// timestamped directory, the ..data symlink is swapped to it with one
// rename, the user-visible symlinks are added, those of paths no longer in
// the payload removed, and the old directory deleted. A payload equal to
// what dir holds (content and mode) writes nothing. It reports whether it
// wrote. now names the new directory. dir must exist.
func writeAtomic(dir string, payload map[string]File, now time.Time) (bool, error) {
	clean, err := cleanPayload(payload)
	if err != nil {
		return false, err
	}
	oldTs, err := os.Readlink(filepath.Join(dir, dataDirName))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", dataDirName, err)
	}
	if oldTs != "" {
		same, err := payloadMatches(filepath.Join(dir, oldTs), clean)
		if err != nil {
			return false, err
		}
		if same && userVisibleMatch(dir, clean) {
			return false, nil
		}
	}
	tsDir, err := os.MkdirTemp(dir, now.UTC().Format(tsDirLayout))
	if err != nil {
		return false, fmt.Errorf("create timestamped directory: %w", err)
	}
	if err := os.Chmod(tsDir, 0o755); err != nil {
		return false, err
	}
	if err := writePayload(tsDir, clean); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, err
	}
	tmpLink := filepath.Join(dir, newDataDirName)
	_ = os.Remove(tmpLink)
	if err := os.Symlink(filepath.Base(tsDir), tmpLink); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, fmt.Errorf("create %s: %w", newDataDirName, err)
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataDirName)); err != nil {
		_ = os.Remove(tmpLink)
		_ = os.RemoveAll(tsDir)
		return false, fmt.Errorf("swap %s: %w", dataDirName, err)
	}
	if err := linkUserVisible(dir, clean); err != nil {
		return true, err
	}
	if err := removeStale(dir, clean); err != nil {
		return true, fmt.Errorf("remove old data: %w", err)
	}
	return true, nil
}

// cleanPayload validates and cleans the payload's paths: relative, without
// "..", not starting with "..", within the kernel's length limits.
func cleanPayload(payload map[string]File) (map[string]File, error) {
	out := make(map[string]File, len(payload))
	for p, f := range payload {
		if err := validatePath(p); err != nil {
			return nil, err
		}
		out[path.Clean(p)] = f
	}
	return out, nil
}

func validatePath(p string) error {
	switch {
	case p == "":
		return errors.New("invalid path: must not be empty")
	case len(p) > maxPathLength:
		return fmt.Errorf("invalid path %q: must be less than or equal to %d characters", p, maxPathLength)
	case path.IsAbs(p):
		return fmt.Errorf("invalid path %q: must be relative path", p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("invalid path %q: must not start with '..'", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("invalid path %q: must not contain '..'", p)
		}
		if len(part) > maxFileLength {
			return fmt.Errorf("invalid path %q: each element must be less than or equal to %d characters", p, maxFileLength)
		}
	}
	return nil
}

// payloadMatches reports whether tsDir holds exactly the payload's files
// with their content and mode.
func payloadMatches(tsDir string, payload map[string]File) (bool, error) {
	n := 0
	err := filepath.Walk(tsDir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		n++
		rel, _ := filepath.Rel(tsDir, p)
		f, ok := payload[filepath.ToSlash(rel)]
		if !ok || info.Mode().Perm() != f.Mode.Perm() {
			return errStop
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(b, f.Data) {
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) || errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("compare payload: %w", err)
	}
	return n == len(payload), nil
}

// errStop ends a walk early.
var errStop = errors.New("stop")

// userVisibleMatch reports whether every top-level path of the payload has
// its symlink.
func userVisibleMatch(dir string, payload map[string]File) bool {
	for top := range topLevel(payload) {
		if target, err := os.Readlink(filepath.Join(dir, top)); err != nil || target != filepath.Join(dataDirName, top) {
			return false
		}
	}
	return true
}

// writePayload writes the files into tsDir, with their parent directories.
func writePayload(tsDir string, payload map[string]File) error {
	for p, f := range payload {
		full := filepath.Join(tsDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("create directory for %s: %w", p, err)
		}
		if err := os.WriteFile(full, f.Data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		// WriteFile's mode passes through the umask; set it exactly.
		if err := os.Chmod(full, f.Mode.Perm()); err != nil {
			return fmt.Errorf("chmod %s: %w", p, err)
		}
		if f.FsUser != nil {
			if err := os.Chown(full, int(*f.FsUser), -1); err != nil {
				return fmt.Errorf("chown %s: %w", p, err)
			}
		}
	}
	return nil
}

// topLevel returns the first element of every payload path.
func topLevel(payload map[string]File) map[string]bool {
	out := map[string]bool{}
	for p := range payload {
		top, _, _ := strings.Cut(p, "/")
		out[top] = true
	}
	return out
}

// linkUserVisible creates the symlink top -> ..data/top of every top-level
// path that lacks one.
func linkUserVisible(dir string, payload map[string]File) error {
	for top := range topLevel(payload) {
		link := filepath.Join(dir, top)
		want := filepath.Join(dataDirName, top)
		if target, err := os.Readlink(link); err == nil && target == want {
			continue
		}
		if err := os.RemoveAll(link); err != nil {
			return err
		}
		if err := os.Symlink(want, link); err != nil {
			return fmt.Errorf("link %s: %w", top, err)
		}
	}
	return nil
}

// removeStale removes the user-visible symlinks of paths no longer in the
// payload and every ".."-named entry but ..data and its target (older or
// interrupted versions: payload paths never start with ".."). Anything else
// is not the writer's and is left alone.
func removeStale(dir string, payload map[string]File) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	current, _ := os.Readlink(filepath.Join(dir, dataDirName))
	tops := topLevel(payload)
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if name == dataDirName || name == current || tops[name] {
			continue
		}
		if !strings.HasPrefix(name, "..") && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
