package logs

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

const (
	// timestampFormat names a rotated file: <log>.<timestamp>.
	timestampFormat = "20060102-150405"
	// compressSuffix is the suffix of a compressed rotated file.
	compressSuffix = ".gz"
	// tmpSuffix marks a compression in progress.
	tmpSuffix = ".tmp"
)

var _ Manager = (*Rotator)(nil)

// Rotator is the default Manager, the kubelet's container log manager: once
// per monitor interval it lists the running containers, and for each whose
// log file (ContainerStatus' LogPath) has reached MaxSize it
//
//  1. removes leftovers of an interrupted rotation (.tmp files, and
//     uncompressed files whose .gz exists),
//  2. removes the oldest rotated files so that at most MaxFiles-2 remain,
//  3. compresses every remaining uncompressed rotated file (gzip),
//  4. renames the log to <log>.<YYYYMMDD-hhmmss> and calls
//     ReopenContainerLog, so the runtime starts a new file (renaming back
//     if the runtime refuses).
//
// The newest rotated file therefore stays uncompressed until the next
// rotation, and a container keeps at most MaxFiles files: the current one,
// the newest rotated one and MaxFiles-2 compressed ones.
type Rotator struct {
	rs  criapi.RuntimeService
	clk clock.WithTicker
	log logr.Logger
	cfg Config

	mu sync.Mutex // serialises rotations and Clean
}

// NewRotator returns the log manager. It does no I/O.
func NewRotator(rs criapi.RuntimeService, clk clock.WithTicker, log logr.Logger, cfg Config) *Rotator {
	return &Rotator{rs: rs, clk: clk, log: log.WithName("logs"), cfg: cfg.withDefaults()}
}

// Run implements Manager. A failed round is logged and retried at the next
// interval.
func (r *Rotator) Run(ctx context.Context) error {
	r.log.Info("starting container log rotation", "maxSize", r.cfg.MaxSize, "maxFiles", r.cfg.MaxFiles,
		"interval", r.cfg.MonitorInterval)
	t := r.clk.NewTicker(r.cfg.MonitorInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			if err := r.RotateLogs(ctx); err != nil && ctx.Err() == nil {
				r.log.Error(err, "container log rotation failed")
			}
		}
	}
}

// RotateLogs runs one round over the running containers, MaxWorkers at a
// time. It returns the errors of the round joined; one container's error
// does not stop the others.
func (r *Rotator) RotateLogs(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	filter := &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}
	if r.cfg.InstanceID != "" {
		filter.LabelSelector = map[string]string{noderuntime.LabelInstance: r.cfg.InstanceID}
	}
	containers, err := r.rs.ListContainers(ctx, filter)
	if err != nil {
		return fmt.Errorf("list running containers: %w", err)
	}
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs []error
		work = make(chan string)
	)
	for range r.cfg.MaxWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				if err := r.checkContainer(ctx, id); err != nil {
					emu.Lock()
					errs = append(errs, err)
					emu.Unlock()
				}
			}
		}()
	}
	for _, c := range containers {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			work <- c.GetId()
		}
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// checkContainer rotates one container's log if it has reached MaxSize. A
// missing log file makes the runtime reopen it, as the kubelet does.
func (r *Rotator) checkContainer(ctx context.Context, id string) error {
	resp, err := r.rs.ContainerStatus(ctx, id, false)
	if err != nil {
		return fmt.Errorf("status of container %s: %w", id, err)
	}
	path := resp.GetStatus().GetLogPath()
	if path == "" {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		r.log.V(2).Info("container log is missing, asking the runtime to reopen it", "containerID", id, "path", path)
		if err := r.rs.ReopenContainerLog(ctx, id); err != nil {
			return fmt.Errorf("reopen missing log %s of container %s: %w", path, id, err)
		}
		if info, err = os.Stat(path); err != nil {
			return fmt.Errorf("container %s log: %w", id, err)
		}
	}
	if info.Size() < r.cfg.maxBytes() {
		return nil
	}
	if err := r.rotate(ctx, id, path); err != nil {
		return fmt.Errorf("rotate log %s of container %s: %w", path, id, err)
	}
	r.log.V(2).Info("rotated container log", "containerID", id, "path", path, "size", info.Size())
	return nil
}

// rotate rotates one log file (steps 1-4 of Rotator's doc).
func (r *Rotator) rotate(ctx context.Context, id, path string) error {
	rotated, err := filepath.Glob(path + ".*")
	if err != nil {
		return err
	}
	if rotated, err = removeUnused(rotated); err != nil {
		return err
	}
	if rotated, err = r.removeExcess(rotated); err != nil {
		return err
	}
	for _, f := range rotated {
		if !strings.HasSuffix(f, compressSuffix) {
			if err := compress(f); err != nil {
				return fmt.Errorf("compress %s: %w", f, err)
			}
		}
	}
	return r.rotateLatest(ctx, id, path)
}

// removeUnused removes the leftovers of an interrupted rotation and returns
// the files still in use.
func removeUnused(files []string) ([]string, error) {
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f] = true
	}
	var inUse []string
	var errs []error
	for _, f := range files {
		unused := strings.HasSuffix(f, tmpSuffix) || (!strings.HasSuffix(f, compressSuffix) && have[f+compressSuffix])
		if !unused {
			inUse = append(inUse, f)
			continue
		}
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return inUse, errors.Join(errs...)
}

// removeExcess removes the oldest rotated files (their names sort by
// time) so that MaxFiles-2 remain: with the current file and the one about
// to be rotated, MaxFiles in all.
func (r *Rotator) removeExcess(files []string) ([]string, error) {
	sort.Strings(files)
	keep := max(r.cfg.MaxFiles-2, 0)
	n := max(len(files)-keep, 0)
	for _, f := range files[:n] {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	return files[n:], nil
}

// compress gzips f into f.gz (through f.gz.tmp) and removes f.
func compress(f string) error {
	in, err := os.Open(f)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := f + tmpSuffix
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after a failure; a no-op once renamed
	w := gzip.NewWriter(out)
	if _, err := io.Copy(w, in); err != nil {
		out.Close()
		return err
	}
	if err := w.Close(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, f+compressSuffix); err != nil {
		return err
	}
	return os.Remove(f)
}

// rotateLatest renames the current log to <log>.<timestamp> and has the
// runtime reopen it; if the runtime refuses, the rename is undone so the
// next round tries again.
func (r *Rotator) rotateLatest(ctx context.Context, id, path string) error {
	rotated := path + "." + r.clk.Now().Format(timestampFormat)
	if err := os.Rename(path, rotated); err != nil {
		return err
	}
	if err := r.rs.ReopenContainerLog(ctx, id); err != nil {
		if back := os.Rename(rotated, path); back != nil {
			r.log.Error(back, "cannot rename the rotated log back; its lines stay in the rotated file", "path", rotated)
		}
		return fmt.Errorf("reopen container log: %w", err)
	}
	return nil
}

// Clean implements Manager: it removes the container's log file and every
// rotated one.
func (r *Rotator) Clean(ctx context.Context, containerID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	resp, err := r.rs.ContainerStatus(ctx, containerID, false)
	if err != nil {
		return fmt.Errorf("status of container %s: %w", containerID, err)
	}
	path := resp.GetStatus().GetLogPath()
	if path == "" {
		return nil
	}
	files, err := filepath.Glob(path + "*")
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		if f != path && !strings.HasPrefix(f, path+".") {
			continue
		}
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
