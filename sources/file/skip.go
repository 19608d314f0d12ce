package file

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxManifestSize is the kubelet's limit on a pod manifest
// (maxConfigLength): a file of 10 MiB or more is refused unread.
const maxManifestSize = 10 << 20

var errTooLarge = errors.New("manifest too large")

// sourced is a static pod with the file it came from.
type sourced struct {
	path string
	pod  *corev1.Pod
}

// statEntry stats a manifest-dir entry (following symlinks) and returns why
// it is skipped, "" if it is a regular file. A nil info with no reason means
// the entry went away meanwhile.
func statEntry(path string, e fs.DirEntry) (fs.FileInfo, string) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && e.Type()&fs.ModeSymlink == 0:
		return nil, ""
	case errors.Is(err, fs.ErrNotExist):
		return nil, "dangling symlink"
	case err != nil:
		return nil, err.Error() // a symlink loop: "too many levels of symbolic links"
	case info.IsDir():
		return nil, "a directory, not a file"
	case !info.Mode().IsRegular():
		return nil, fmt.Sprintf("not a regular file (%s)", info.Mode().Type())
	}
	return info, ""
}

// readAtMost reads the file, failing with errTooLarge once limit bytes are
// read (the file grew after it was stat'ed).
func readAtMost(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) >= limit {
		return data, errTooLarge
	}
	return data, nil
}

func (d *dir) refuseTooLarge(path string, size int64, prev *fileState) {
	d.log.Error(fmt.Errorf("pod manifest is %d bytes; files of %d bytes (10 MiB) or more are refused unread, as by the kubelet",
		size, maxManifestSize), "Could not read pod manifest", "file", path)
	d.keepLastGood(path, prev)
}

// unique drops, from pods in file name order, a pod whose UID or
// namespace/name an earlier file's pod already has (the first file wins,
// as in the kubelet), recording the reason in skipped.
func (d *dir) unique(pods []sourced, skipped map[string]string) []*corev1.Pod {
	byName := map[string]string{}
	byUID := map[types.UID]string{}
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		key := p.pod.Namespace + "/" + p.pod.Name
		if first, ok := byName[key]; ok {
			skipped[p.path] = fmt.Sprintf("duplicate pod name %s: %s already has it", key, first)
			continue
		}
		if first, ok := byUID[p.pod.UID]; ok {
			skipped[p.path] = fmt.Sprintf("duplicate pod UID %s: %s already has it", p.pod.UID, first)
			continue
		}
		byName[key], byUID[p.pod.UID] = p.path, p.path
		out = append(out, p.pod)
	}
	return out
}

// logSkipped logs, at the default verbosity, one line for each entry that
// is skipped for a new reason, and remembers the reasons, so that a
// periodic rescan logs nothing new.
func (d *dir) logSkipped(skipped map[string]string) {
	paths := make([]string, 0, len(skipped))
	for p := range skipped {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if d.skipped[p] != skipped[p] {
			d.log.Info("Skipping entry of the static pod directory", "file", p, "reason", skipped[p])
		}
	}
	d.skipped = skipped
}
