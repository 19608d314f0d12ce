package abtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/runtime/sim"
)

// Workload is the scripted workload and where it runs.
type Workload struct {
	// Runtime is "sim" (the simulated in-process runtime) or "cri".
	Runtime string
	// Endpoint is the CRI endpoint when Runtime is "cri".
	Endpoint string
	// Image is the containers' image.
	Image string
	// CgroupParent is the pods' cgroup parent on a CRI runtime.
	CgroupParent string
	// Pods is the number of pods.
	Pods int
	// Duration is the measurement window.
	Duration time.Duration
	// ExitAfter is how long a container runs before it exits with code 1.
	ExitAfter time.Duration
	// ExitSpread is added to ExitAfter, spread evenly over the pods, so that
	// exits do not all come at once.
	ExitSpread time.Duration
	// BackOff is the initial CrashLoopBackOff delay.
	BackOff time.Duration
	// StartTimeout bounds the time until every pod runs.
	StartTimeout time.Duration
	// GCPeriod is the agent's container garbage collection period; zero
	// keeps the agent's default (1m).
	GCPeriod time.Duration
	// RootDir holds each run's agent root and manifests.
	RootDir string
	// SandboxLatency is how long the simulated runtime takes to create a
	// sandbox; it makes starting pods a queue. Defaults to 0.
	SandboxLatency time.Duration
	// HighEvery gives every HighEvery'th pod (from the first) priority
	// 1000, the others 0; 0 gives none a priority.
	HighEvery int
	// DenyEvery labels every DenyEvery'th pod (from the second)
	// DenyLabel, which the admission=deny variant refuses; 0 labels none.
	DenyEvery int
	// MaxStarting is the start=priority gate's limit of pods starting at
	// once; 0 is no limit.
	MaxStarting int
}

// DefaultWorkload is the workload cmd/plegab runs without flags: 100 pods
// on the simulated runtime for 2 minutes, containers exiting after 20-30s.
func DefaultWorkload() Workload {
	return Workload{
		Runtime: nodekit.RuntimeSim, Image: "localhost/nodekit/busybox:1", Pods: 100, Duration: 2 * time.Minute,
		ExitAfter: 20 * time.Second, ExitSpread: 10 * time.Second, BackOff: 10 * time.Second, StartTimeout: 5 * time.Minute,
		HighEvery: 4, DenyEvery: 10, MaxStarting: 4,
	}
}

// Validate reports a workload that cannot run.
func (w Workload) Validate() error {
	var errs []error
	switch w.Runtime {
	case nodekit.RuntimeSim:
	case nodekit.RuntimeCRI:
		if w.Endpoint == "" {
			errs = append(errs, errors.New("--runtime cri needs --runtime-endpoint"))
		}
	default:
		errs = append(errs, fmt.Errorf("runtime %q: want sim or cri", w.Runtime))
	}
	if w.Pods <= 0 {
		errs = append(errs, fmt.Errorf("pods %d: want at least 1", w.Pods))
	}
	if w.HighEvery < 0 || w.DenyEvery < 0 || w.MaxStarting < 0 || w.SandboxLatency < 0 {
		errs = append(errs, errors.New("high-every, deny-every, max-starting and sandbox-latency must not be negative"))
	}
	if w.Duration <= 0 || w.ExitAfter <= 0 || w.ExitSpread < 0 || w.BackOff <= 0 || w.StartTimeout <= 0 {
		errs = append(errs, errors.New("durations must be positive (exit-spread may be 0)"))
	}
	return errors.Join(errs...)
}

// HighPriority is the priority of the workload's high-priority pods.
const HighPriority = 1000

// exitAfter is how long pod i's container runs.
func (w Workload) exitAfter(i int) time.Duration {
	return w.ExitAfter + time.Duration(i)*w.ExitSpread/time.Duration(w.Pods)
}

// writeManifests writes the workload's pods into dir.
func (w Workload) writeManifests(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range w.Pods {
		d := w.exitAfter(i)
		prio, labels := 0, "{}"
		if w.HighEvery > 0 && i%w.HighEvery == 0 {
			prio = HighPriority
		}
		if w.DenyEvery > 0 && i%w.DenyEvery == 1%w.DenyEvery {
			labels = "{" + DenyLabel + ": \"yes\"}"
		}
		manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: ab%03d
  namespace: plegab
  labels: %[8]s
  annotations:
    %[2]sapp.%[3]s: %[4]q
    %[2]sapp.%[5]s: "1"
spec:
  priority: %[9]d
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %[6]s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep %[7]g & wait; exit 1"]
`, i, sim.AnnotationPrefix, sim.FieldExitAfter, d.String(), sim.FieldExitCode, w.Image, d.Seconds(), labels, prio)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("ab%03d.yaml", i)), []byte(manifest), 0o644); err != nil {
			return err
		}
	}
	return nil
}
