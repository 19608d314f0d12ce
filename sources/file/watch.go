package file

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// Watch retry backoff, as the kubelet's file source.
const (
	retryPeriod    = time.Second
	maxRetryPeriod = 20 * time.Second
)

// watch is the fsnotify watch on the manifest directory, set up again with
// backoff whenever it cannot be set up or is lost. Only the Run goroutine
// uses it.
type watch struct {
	path     string
	clk      clock.WithTicker
	log      logr.Logger
	fs       *fsnotify.Watcher // nil while not watching
	retry    clock.Timer       // armed while not watching
	backoff  time.Duration
	failures failures
}

func newWatch(path string, clk clock.WithTicker, log logr.Logger) *watch {
	return &watch{path: path, clk: clk, log: log, backoff: retryPeriod, failures: failures{}}
}

// start sets up the watch and reports whether it did. On failure it logs
// (once per kind of failure) and arms the retry timer.
func (w *watch) start() bool {
	w.retry = nil
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		w.fail("create", fmt.Errorf("create fsnotify watcher for %s: %w", w.path, err))
		return false
	}
	if err := fw.Add(w.path); err != nil {
		_ = fw.Close()
		kind := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			kind = "missing"
		}
		w.fail(kind, fmt.Errorf("watch %s: %w", w.path, err))
		return false
	}
	w.fs = fw
	w.backoff = retryPeriod
	w.failures.clear()
	w.log.Info("Watching static pod directory", "path", w.path)
	return true
}

// lost drops a watch that stopped working and arms the retry timer.
func (w *watch) lost(err error) {
	w.close()
	w.fail("lost: "+err.Error(), fmt.Errorf("watch %s: %w", w.path, err))
}

func (w *watch) fail(kind string, err error) {
	if w.failures.first(kind) {
		w.log.Error(err, "Cannot watch static pod directory; retrying with backoff and rescanning meanwhile",
			"path", w.path, "retryIn", w.backoff)
	} else {
		w.log.V(4).Info("Still cannot watch static pod directory", "path", w.path, "err", err.Error(), "retryIn", w.backoff)
	}
	w.retry = w.clk.NewTimer(w.backoff)
	w.backoff = min(2*w.backoff, maxRetryPeriod)
}

// close stops watching and stops the retry timer.
func (w *watch) close() {
	if w.fs != nil {
		_ = w.fs.Close()
		w.fs = nil
	}
	if w.retry != nil {
		w.retry.Stop()
		w.retry = nil
	}
}

// events, errors and retryC are nil channels when they do not apply, so
// that a select skips them.
func (w *watch) events() <-chan fsnotify.Event {
	if w.fs == nil {
		return nil
	}
	return w.fs.Events
}

func (w *watch) errors() <-chan error {
	if w.fs == nil {
		return nil
	}
	return w.fs.Errors
}

func (w *watch) retryC() <-chan time.Time {
	if w.retry == nil {
		return nil
	}
	return w.retry.C()
}

// eventKind is what an fsnotify event means for the source.
type eventKind int

const (
	// ignored: not a manifest, or an operation that changes nothing.
	ignored eventKind = iota
	// changed: a manifest was created, written, removed, renamed or
	// chmodded.
	changed
	// dirGone: the directory itself was removed or renamed; the watch is
	// lost.
	dirGone
)

func (w *watch) classify(ev fsnotify.Event) eventKind {
	if filepath.Clean(ev.Name) == filepath.Clean(w.path) {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			return dirGone
		}
		return ignored
	}
	if !isManifest(filepath.Base(ev.Name)) {
		return ignored
	}
	if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Remove) ||
		ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Chmod) {
		return changed
	}
	return ignored
}
