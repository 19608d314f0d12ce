package images

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// ImageService is the part of the CRI image service the GC uses.
type ImageService interface {
	ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error)
	RemoveImage(ctx context.Context, image *runtimeapi.ImageSpec) error
}

// ContainerRuntime is the part of the CRI runtime service the GC uses:
// every container (to know the images in use) and the verbose status (for
// the sandbox image).
type ContainerRuntime interface {
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error)
}

var (
	_ Manager          = (*GC)(nil)
	_ ImageService     = criapi.ImageManagerService(nil)
	_ ContainerRuntime = criapi.RuntimeService(nil)
)

// GC is the default Manager, the kubelet's image GC manager (see the
// package documentation for the policy).
type GC struct {
	is      ImageService
	rs      ContainerRuntime
	fs      ImageFs
	events  noderuntime.EventRecorder
	clk     clock.WithTicker
	log     logr.Logger
	metrics *metrics
	filter  Filter

	mu          sync.Mutex
	cfg         Config
	records     map[string]*record
	sandboxRead bool
	began       time.Time
}

// NewGC returns the image GC. filter may be nil (every image is a
// candidate). It does no I/O.
func NewGC(is ImageService, rs ContainerRuntime, fs ImageFs, events noderuntime.EventRecorder, clk clock.WithTicker,
	reg prometheus.Registerer, log logr.Logger, cfg Config, filter Filter) *GC {
	return &GC{
		is: is, rs: rs, fs: fs, events: events, clk: clk, log: log.WithName("images"), metrics: newMetrics(reg),
		filter: filter, cfg: cfg.withDefaults(), records: map[string]*record{}, began: clk.Now(),
	}
}

// Run implements Manager.
func (g *GC) Run(ctx context.Context) error {
	g.mu.Lock()
	g.began = g.clk.Now()
	g.mu.Unlock()
	g.log.Info("starting image garbage collection", "highThresholdPercent", g.cfg.HighThresholdPercent,
		"lowThresholdPercent", g.cfg.LowThresholdPercent, "minAge", g.cfg.MinAge, "maxAge", g.cfg.MaxAge, "period", g.cfg.Period)
	t := g.clk.NewTicker(g.cfg.Period)
	defer t.Stop()
	failedBefore := false
	for {
		err := g.GarbageCollect(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && failedBefore:
			g.log.Error(err, "image garbage collection failed multiple times in a row")
			g.events.Eventf(g.nodeRef(), corev1.EventTypeWarning, ReasonImageGCFailed, "%s", err.Error())
		case err != nil:
			g.log.Error(err, "image garbage collection failed once; stats initialization may not have completed yet")
		default:
			g.log.V(4).Info("image garbage collection succeeded")
		}
		failedBefore = err != nil
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// GarbageCollect implements Manager.
func (g *GC) GarbageCollect(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	freeTime := g.clk.Now()
	if g.cfg.MaxAge > 0 {
		if err := g.freeOld(ctx, freeTime); err != nil {
			return err
		}
	}
	if g.cfg.HighThresholdPercent >= 100 {
		return nil
	}
	capacity, available, err := g.fs.ImageFsUsage(ctx)
	if err != nil {
		return fmt.Errorf("image filesystem usage: %w", err)
	}
	if available > capacity {
		g.log.Info("image filesystem reports more available than its capacity", "available", available, "capacity", capacity)
		available = capacity
	}
	if capacity == 0 {
		err := errors.New("invalid capacity 0 on image filesystem")
		g.events.Eventf(g.nodeRef(), corev1.EventTypeWarning, ReasonInvalidDiskCapacity, "%s", err.Error())
		return err
	}
	usage := 100 - int(available*100/capacity)
	g.metrics.usage.Set(float64(usage))
	if usage < g.cfg.HighThresholdPercent {
		return nil
	}
	toFree := int64(capacity)*int64(100-g.cfg.LowThresholdPercent)/100 - int64(available)
	g.log.Info("disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold",
		"usage", usage, "highThreshold", g.cfg.HighThresholdPercent, "amountToFree", toFree, "lowThreshold", g.cfg.LowThresholdPercent)
	freed, err := g.freeSpace(ctx, toFree, freeTime)
	if err != nil {
		return err
	}
	if int64(freed) < toFree {
		err := fmt.Errorf("failed to garbage collect required amount of images. Attempted to free %d bytes, but only found %d bytes eligible to free: %w",
			toFree, freed, ErrNotEnoughFreed)
		g.events.Eventf(g.nodeRef(), corev1.EventTypeWarning, ReasonFreeDiskSpaceFailed,
			"Failed to garbage collect required amount of images. Attempted to free %d bytes, but only found %d bytes eligible to free.", toFree, freed)
		return err
	}
	return nil
}

// DeleteUnusedImages implements Manager.
func (g *GC) DeleteUnusedImages(ctx context.Context) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.log.Info("attempting to delete unused images")
	return g.freeSpace(ctx, math.MaxInt64, g.clk.Now())
}

// freeSpace removes candidates in order until toFree bytes are freed and
// returns the bytes freed. The caller holds g.mu.
func (g *GC) freeSpace(ctx context.Context, toFree int64, freeTime time.Time) (uint64, error) {
	inUse, err := g.detect(ctx, freeTime)
	if err != nil {
		return 0, err
	}
	var freed uint64
	var errs []error
	for _, c := range g.candidates(inUse, freeTime) {
		if err := g.remove(ctx, c, reasonSpace); err != nil {
			errs = append(errs, err)
			continue
		}
		freed += c.size
		if freed >= uint64(toFree) {
			break
		}
	}
	if len(errs) > 0 {
		return freed, fmt.Errorf("wanted to free %d bytes, but freed %d bytes space with errors in image deletion: %w",
			toFree, freed, errors.Join(errs...))
	}
	return freed, nil
}

// freeOld removes the candidates unused for longer than MaxAge, once the
// GC has been running for MaxAge (before, it has not watched long enough
// to know). The caller holds g.mu.
func (g *GC) freeOld(ctx context.Context, freeTime time.Time) error {
	inUse, err := g.detect(ctx, freeTime)
	if err != nil {
		return err
	}
	if freeTime.Sub(g.began) <= g.cfg.MaxAge {
		return nil
	}
	var errs []error
	for _, c := range g.candidates(inUse, freeTime) {
		if freeTime.Sub(c.lastUsedOrDetected()) <= g.cfg.MaxAge {
			continue
		}
		if err := g.remove(ctx, c, reasonAge); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// remove removes one image by ID and forgets it. The caller holds g.mu.
func (g *GC) remove(ctx context.Context, c candidate, reason string) error {
	g.log.Info("removing image to free bytes", "imageID", c.id, "size", c.size, "reason", reason,
		"lastUsed", c.lastUsed, "firstDetected", c.firstDetected)
	if err := g.is.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: c.id}); err != nil {
		return fmt.Errorf("remove image %s: %w", c.id, err)
	}
	delete(g.records, c.id)
	g.metrics.collected.WithLabelValues(reason).Inc()
	return nil
}

// nodeRef is the node as events name it, as the kubelet's nodeRef.
func (g *GC) nodeRef() *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", Name: g.cfg.NodeName, UID: types.UID(g.cfg.NodeName)}
}

// lastUsedOrDetected is when the image was last used, or first detected
// if it was never seen in use.
func (c candidate) lastUsedOrDetected() time.Time {
	if c.lastUsed.IsZero() {
		return c.firstDetected
	}
	return c.lastUsed
}

// sortCandidates orders least recently used first (as upstream, an image
// never seen in use comes before every used one), then the earliest
// detected, then by ID for a stable order.
func sortCandidates(cs []candidate) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if !a.lastUsed.Equal(b.lastUsed) {
			return a.lastUsed.Before(b.lastUsed)
		}
		if !a.firstDetected.Equal(b.firstDetected) {
			return a.firstDetected.Before(b.firstDetected)
		}
		return a.id < b.id
	})
}
