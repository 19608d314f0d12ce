package runtimetest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/internal/suitekit"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/runtime/sim"
)

// Backend is a runtime under test.
type Backend struct {
	// Name names the backend in subtest names.
	Name string
	// Open returns a runtime for one case and the clock it runs on, and
	// registers its own cleanup on tb. A *testingclock.FakeClock is
	// stepped by the suite; any other clock is real time. The suite
	// removes the pods it made (KillPod, then GarbageCollect when the
	// runtime has it) before that cleanup runs.
	Open func(tb testing.TB) (noderuntime.Runtime, clock.WithTicker)
	// Image is the test containers' image; on a real runtime it must be
	// present and have sh and sleep. Defaults to "runtimetest/busybox:1".
	Image string
}

// Epoch is where the simulated backend's fake clock starts.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// instanceSeq makes every case's instance ID unique within the process.
var instanceSeq atomic.Int64

// SimBackend is runtime/cri over the simulated CRI runtime (runtime/sim)
// with a fake clock, new for each case.
func SimBackend() Backend {
	return Backend{
		Name: "sim",
		Open: func(tb testing.TB) (noderuntime.Runtime, clock.WithTicker) {
			clk := testingclock.NewFakeClock(Epoch)
			s := sim.New(clk, logr.Discard(), sim.Config{})
			return NewCRIManager(tb, s, s, clk, ""), clk
		},
	}
}

// CRIBackend is runtime/cri over a real CRI runtime at endpoint (e.g.
// containerd's unix:///run/containerd/containerd.sock) on the real clock;
// image must be present there and have sh and sleep. Each case connects
// anew.
func CRIBackend(endpoint, image, cgroupParent string) Backend {
	return Backend{
		Name:  "cri",
		Image: image,
		Open: func(tb testing.TB) (noderuntime.Runtime, clock.WithTicker) {
			tb.Helper()
			rs, is := suitekit.ConnectCRI(tb, endpoint)
			return NewCRIManager(tb, rs, is, clock.RealClock{}, cgroupParent), clock.RealClock{}
		},
	}
}

// NewCRIManager returns a runtime/cri Manager over rs and is with an
// instance ID of its own (so that it sees only the pods of its case), its
// root directory and resolv.conf in tb's temporary directory, and short
// restart backoffs (500ms doubling to 2s).
func NewCRIManager(tb testing.TB, rs criapi.RuntimeService, is criapi.ImageManagerService, clk clock.WithTicker, cgroupParent string) *cri.Manager {
	tb.Helper()
	dir := tb.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 10.0.0.53\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return cri.NewManager(rs, is, clk, logr.Discard(), cri.Config{
		InstanceID:       fmt.Sprintf("runtimetest-%d-%d", os.Getpid(), instanceSeq.Add(1)),
		RootDir:          filepath.Join(dir, "root"),
		PodLogsDir:       filepath.Join(dir, "root", "logs"),
		ContainerLogsDir: filepath.Join(dir, "containers"),
		ResolvConf:       resolv,
		CgroupParent:     cgroupParent,
		InitialBackOff:   500 * time.Millisecond,
		MaxBackOff:       2 * time.Second,
	})
}
