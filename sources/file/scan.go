package file

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// fileState is what the source remembers of one manifest file.
type fileState struct {
	// sum is the SHA-256 of the content last read.
	sum [sha256.Size]byte
	// good is the last static pod the file produced, nil if none yet. A
	// broken edit keeps it.
	good *corev1.Pod
	// readErr is the last error reading the file, "" if it read.
	readErr string
	// tooLarge is the size and modification time of a file refused for its
	// size, so that it is neither read nor logged again until it changes.
	tooLarge *fileStamp
}

// fileStamp identifies one version of a file without reading it.
type fileStamp struct {
	size    int64
	modTime int64
}

// dir reads the manifest directory. It remembers each file's last content
// and last good pod, so that unchanged files are not parsed (nor their
// problems logged) again, and a broken edit does not take a running static
// pod away. Only the Run goroutine uses it.
type dir struct {
	path     string
	nodeName string
	log      logr.Logger
	files    map[string]*fileState
	failures failures
	// skipped is why each skipped directory entry was skipped, as last
	// logged: an entry is logged again only when its reason changes.
	skipped map[string]string
}

func newDir(path, nodeName string, log logr.Logger) *dir {
	return &dir{path: path, nodeName: nodeName, log: log, files: map[string]*fileState{}, failures: failures{},
		skipped: map[string]string{}}
}

// isManifest reports whether a directory entry's name is read as a
// manifest: a .yaml, .yml or .json file whose name does not start with a dot.
func isManifest(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// scan reads the directory and returns its static pods, in file name
// order, as new copies. A missing directory has no pods. ok is false if the
// directory exists but cannot be read: the last snapshot then stands.
func (d *dir) scan() (pods []*corev1.Pod, ok bool) {
	entries, err := os.ReadDir(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		if d.failures.first("missing") {
			d.log.Info("Static pod directory does not exist; no static pods until it does", "path", d.path)
		}
		d.files = map[string]*fileState{}
		return []*corev1.Pod{}, true
	}
	if err != nil {
		if d.failures.first("read: " + err.Error()) {
			d.log.Error(err, "Could not read static pod directory; keeping the pods read before", "path", d.path)
		}
		return nil, false
	}
	d.failures.clear()
	next := make(map[string]*fileState, len(d.files))
	skipped := map[string]string{}
	var found []sourced
	for _, e := range entries {
		if !isManifest(e.Name()) {
			continue
		}
		path := filepath.Join(d.path, e.Name())
		info, reason := statEntry(path, e)
		if reason != "" {
			skipped[path] = reason
			continue
		}
		if info == nil {
			continue // removed since the directory was read
		}
		st := d.read(path, info, d.files[path])
		if st == nil {
			continue
		}
		next[path] = st
		if st.good != nil {
			found = append(found, sourced{path: path, pod: st.good})
		}
	}
	d.files = next
	pods = []*corev1.Pod{}
	for _, p := range d.unique(found, skipped) {
		pods = append(pods, p.DeepCopy())
	}
	d.logSkipped(skipped)
	return pods, true
}

// read reads one manifest file; prev is what the last scan found there. It
// returns nil if the file is gone.
func (d *dir) read(path string, info fs.FileInfo, prev *fileState) *fileState {
	if prev == nil {
		prev = &fileState{}
	}
	stamp := &fileStamp{size: info.Size(), modTime: info.ModTime().UnixNano()}
	if stamp.size >= maxManifestSize {
		if prev.tooLarge == nil || *prev.tooLarge != *stamp {
			d.refuseTooLarge(path, stamp.size, prev)
		}
		return &fileState{sum: prev.sum, good: prev.good, tooLarge: stamp}
	}
	data, err := readAtMost(path, maxManifestSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if errors.Is(err, errTooLarge) {
		if prev.tooLarge == nil {
			d.refuseTooLarge(path, max(info.Size(), int64(len(data))), prev)
		}
		return &fileState{sum: prev.sum, good: prev.good, tooLarge: stamp}
	}
	if err != nil {
		if prev.readErr != err.Error() {
			d.log.Error(err, "Could not read pod manifest", "file", path)
		}
		return &fileState{sum: prev.sum, good: prev.good, readErr: err.Error()}
	}
	sum := sha256.Sum256(data)
	if sum == prev.sum {
		return &fileState{sum: sum, good: prev.good}
	}
	pod, err := d.parse(path, data)
	if err != nil {
		d.log.Error(err, "Could not read pod manifest", "file", path)
		d.keepLastGood(path, prev)
		return &fileState{sum: sum, good: prev.good}
	}
	d.log.V(2).Info("Read pod manifest", "file", path, "pod", klog.KObj(pod), "podUID", pod.UID)
	return &fileState{sum: sum, good: pod}
}

// parse decodes, checks and completes one manifest, logging the fields it
// ignored.
func (d *dir) parse(path string, data []byte) (*corev1.Pod, error) {
	decoded, issues, err := decode(data)
	if err != nil {
		return nil, err
	}
	for _, is := range issues {
		if is.duplicate {
			d.log.Info("Duplicate field in pod manifest; the last value wins", "file", path, "field", is.path)
		} else {
			d.log.Info("Unknown field in pod manifest", "file", path, "field", is.path)
		}
	}
	if n := extraDocuments(data); n > 0 {
		d.log.Info("Skipping the second and later documents of a multi-document pod manifest; only the first is read",
			"file", path, "skippedDocuments", n)
	}
	if err := checkManifest(decoded); err != nil {
		return nil, err
	}
	pod, err := staticPod(decoded, path, d.nodeName)
	if err != nil {
		return nil, err
	}
	if err := validate(pod); err != nil {
		return nil, err
	}
	return pod, nil
}

// keepLastGood logs that the file's last good pod, if any, keeps running.
func (d *dir) keepLastGood(path string, prev *fileState) {
	if prev.good != nil {
		d.log.Info("Keeping the last good version of the static pod", "file", path,
			"pod", klog.KObj(prev.good), "podUID", prev.good.UID)
	}
}

// failures remembers which kinds of failure were already logged, so that
// each is logged once until things work again.
type failures map[string]bool

// first records kind and reports whether it is new.
func (f failures) first(kind string) bool {
	if f[kind] {
		return false
	}
	f[kind] = true
	return true
}

func (f failures) clear() {
	clear(f)
}
