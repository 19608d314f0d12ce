package sim

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

var (
	_ criapi.RuntimeService      = (*Runtime)(nil)
	_ criapi.ImageManagerService = (*Runtime)(nil)
)

// Runtime is the simulated container runtime: an in-memory implementation
// of the CRI RuntimeService and ImageManagerService. Nothing runs: sandboxes
// and containers are records whose lifecycle follows the CRI's rules and the
// scripts in their pods' annotations, timed by the clock.
//
// All methods are safe for concurrent use.
type Runtime struct {
	clk   clock.WithTicker
	log   logr.Logger
	cfg   Config
	calls atomic.Uint64

	randMu sync.Mutex
	rand   *rand.Rand

	// mu guards everything below. Lock order: mu before a subscriber's lock.
	// Never call the clock while holding mu: the fake clock runs scheduled
	// exits under its own lock, and they take mu.
	mu         sync.Mutex
	sandboxes  map[string]*sandbox
	containers map[string]*container
	// sandboxesByPod and containersByPod index the two by pod UID label.
	sandboxesByPod  labelIndex[*sandbox]
	containersByPod labelIndex[*container]
	names           map[string]string // reserved "name" -> ID, as containerd reserves them
	ips             ipPool
	images          map[string]*image // by ID
	imageNames      map[string]string // name -> ID
	subs            map[*subscriber]struct{}
	seq             uint64 // creation order, to sort objects created at the same time
}

// New returns an empty simulated runtime timed by clk. cfg must be valid
// (see Config.Validate). New does no I/O and starts no goroutines.
func New(clk clock.WithTicker, log logr.Logger, cfg Config) *Runtime {
	r := &Runtime{
		clk:             clk,
		log:             log.WithName("sim"),
		cfg:             cfg,
		rand:            rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6e6f64656b6974)),
		sandboxes:       map[string]*sandbox{},
		containers:      map[string]*container{},
		sandboxesByPod:  labelIndex[*sandbox]{},
		containersByPod: labelIndex[*container]{},
		names:           map[string]string{},
		ips:             newIPPool(),
		images:          map[string]*image{},
		imageNames:      map[string]string{},
		subs:            map[*subscriber]struct{}{},
	}
	for _, name := range cfg.Images {
		r.addImageLocked(name)
	}
	return r
}

// Calls returns how many CRI calls the runtime has served, for benchmarks
// that count calls per pod. It does not block.
func (r *Runtime) Calls() uint64 { return r.calls.Load() }

// begin counts a call of method and waits out its simulated latency on the
// clock. It returns a gRPC status error when ctx ends first. A zero latency
// does not touch the clock.
func (r *Runtime) begin(ctx context.Context, method string) error {
	r.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return ctxError(err)
	}
	l := r.cfg.latency(method)
	if l.IsZero() {
		return nil
	}
	d := l.Fixed
	if l.Jitter > 0 {
		r.randMu.Lock()
		d += time.Duration(r.rand.Int64N(int64(l.Jitter) + 1))
		r.randMu.Unlock()
	}
	return r.sleep(ctx, d)
}

// sleep waits d on the clock, or until ctx ends.
func (r *Runtime) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := r.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctxError(ctx.Err())
	}
}

// schedule runs f once after d on the clock and returns a function that
// cancels it. With a clock that has AfterFunc (the real and the fake clock)
// nothing waits; otherwise a goroutine waits on a timer. The returned
// function must not be called while holding r.mu.
func (r *Runtime) schedule(d time.Duration, f func()) (cancel func()) {
	if dc, ok := r.clk.(clock.WithDelayedExecution); ok {
		t := dc.AfterFunc(d, f)
		return func() { t.Stop() }
	}
	t := r.clk.NewTimer(d)
	done := make(chan struct{})
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			f()
		case <-done:
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}

// newID returns a random 64-hex-digit ID from the seeded source.
func (r *Runtime) newID() string {
	var b [32]byte
	r.randMu.Lock()
	for i := 0; i < len(b); i += 8 {
		v := r.rand.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	r.randMu.Unlock()
	return hex.EncodeToString(b[:])
}

// nanos is the clock's time in CRI nanoseconds.
func (r *Runtime) nanos() int64 { return r.clk.Now().UnixNano() }

// ctxError turns a context error into the gRPC status a remote call returns.
func ctxError(err error) error { return status.FromContextError(err).Err() }

// notFound is the gRPC NotFound error the CRI manager recognises.
func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "sim: %s %q not found", kind, id)
}

// unimplemented is the error of a method the simulation does not provide.
func unimplemented(method string) error {
	return status.Errorf(codes.Unimplemented, "sim runtime does not implement %s", method)
}

// Version reports RuntimeName "sim" and RuntimeVersion.
func (r *Runtime) Version(ctx context.Context, _ string) (*runtimeapi.VersionResponse, error) {
	if err := r.begin(ctx, "Version"); err != nil {
		return nil, err
	}
	return &runtimeapi.VersionResponse{
		Version: "0.1.0", RuntimeName: RuntimeName, RuntimeVersion: RuntimeVersion, RuntimeApiVersion: APIVersion,
	}, nil
}

// Status reports the runtime and its network ready.
func (r *Runtime) Status(ctx context.Context, _ bool) (*runtimeapi.StatusResponse, error) {
	if err := r.begin(ctx, "Status"); err != nil {
		return nil, err
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}}, nil
}

// UpdateRuntimeConfig accepts and ignores the configuration.
func (r *Runtime) UpdateRuntimeConfig(ctx context.Context, _ *runtimeapi.RuntimeConfig) error {
	return r.begin(ctx, "UpdateRuntimeConfig")
}

// RuntimeConfig reports the cgroupfs cgroup driver.
func (r *Runtime) RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	if err := r.begin(ctx, "RuntimeConfig"); err != nil {
		return nil, err
	}
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{
		CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS,
	}}, nil
}

// Close does nothing: there is no connection to close, and the state stays
// readable. It serves both the runtime and the image service.
func (r *Runtime) Close(context.Context) error { return nil }
