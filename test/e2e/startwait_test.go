//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
)

// TestMaxParallelStartsOfOneStartsEveryPodAndShowsTheWait runs the nodekit
// binary with --max-parallel-starts=1 and six static pods of two containers
// each: every pod runs both containers with no restart, /metrics shows one
// start-slot wait per start call (6 sandboxes, 12 creates, 12 starts) and
// as many runtime operations (none was retried), and some call did wait.
// Removing the manifests then stops every container without taking a start
// slot.
func TestMaxParallelStartsOfOneStartsEveryPodAndShowsTheWait(t *testing.T) {
	h := newAgentHarness(t)
	bin := buildAgent(t)
	var names []string
	for i := range 6 {
		name := fmt.Sprintf("slot-%d", i)
		h.writeManifest(name+".yaml", twoContainerPod(h.env.Image, name, strconv.Itoa(i)))
		names = append(names, name)
	}
	begun := time.Now()
	startUnjoinedAgent(t, bin, h, "--max-parallel-starts=1")
	for _, name := range names {
		h.waitPod(name, 3*time.Minute, "both containers running and ready with 0 restarts", func(p *corev1.Pod) bool {
			return allReady(p) && restarts(p, "first") == 0 && restarts(p, "second") == 0
		})
	}
	t.Logf("6 pods of 2 containers running %.1f s after the agent was started", time.Since(begun).Seconds())
	if n := len(h.runningContainers()); n != 12 {
		t.Fatalf("%d containers run in the runtime, want 12", n)
	}

	// The kubelet's operation names of the calls --max-parallel-starts bounds.
	startOps := []string{"run_podsandbox", "create_container", "start_container"}
	want := map[string]uint64{"run_podsandbox": 6, "create_container": 12, "start_container": 12}
	m := waitStartMetrics(t, h.port, want)
	var slow uint64
	for _, op := range startOps {
		slow += m.slow[op]
		t.Logf("%s: %d calls waited %.3f s for a start slot in all, %d of them over 5 ms", op, m.waits[op], m.waitSum[op], m.slow[op])
	}
	// Six sandboxes asked for one slot at once: at least five waited for
	// another's RunPodSandbox, which takes far longer than 5 ms.
	if slow == 0 {
		t.Errorf("none of 30 start calls of 6 pods at once through 1 slot waited over 5 ms for it")
	}

	for _, name := range names {
		if err := os.Remove(filepath.Join(h.manifests, name+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	within(t, 2*time.Minute, "every container to stop after the manifests were removed", func() bool {
		return len(h.runningContainers()) == 0
	})
	after := scrapeStartMetrics(t, h.port)
	for _, op := range startOps {
		if after.waits[op] != want[op] {
			t.Errorf("after the pods were stopped %s shows %d start-slot waits, want still %d: a stop took a start slot",
				op, after.waits[op], want[op])
		}
	}
	if stops := after.ops["stop_container"]; stops < 12 {
		t.Errorf("%v stop_container operations after removing 12 containers' pods, want at least 12", stops)
	}
}

// startUnjoinedAgent runs the nodekit binary for the harness's node, not
// joined to a cluster, serving /pods and /metrics on a free port
// (h.port), with the extra flags, and waits until its sync loop is healthy.
// The test's cleanup stops it.
func startUnjoinedAgent(t *testing.T, bin string, h *agentHarness, extra ...string) *exec.Cmd {
	t.Helper()
	h.port = freePort(t)
	cmd := startAgentBinary(t, bin, h, func(cmd *exec.Cmd) { stopAgent(t, cmd) },
		append([]string{"--port", strconv.Itoa(h.port), "--secure-port", "0"}, extra...)...)
	within(t, time.Minute, "the agent to serve /healthz/syncloop", func() bool { return h.healthz("syncloop") == http.StatusOK })
	return cmd
}

// startMetrics are the start-slot wait counts and sums and the runtime
// operation counts, by operation type, of one scrape.
type startMetrics struct {
	waits   map[string]uint64
	waitSum map[string]float64
	slow    map[string]uint64 // waits above the histogram's first bucket, 5 ms
	ops     map[string]float64
}

// matches reports whether every operation of want has want's count of
// start-slot waits and of runtime operations.
func (m startMetrics) matches(want map[string]uint64) bool {
	for op, n := range want {
		if m.waits[op] != n || m.ops[op] != float64(n) {
			return false
		}
	}
	return true
}

// waitStartMetrics scrapes /metrics on port until it matches want (the last
// start call's operation is counted as its slot is released, just after
// the container runs), failing the test after a minute with the last scrape.
func waitStartMetrics(t *testing.T, port int, want map[string]uint64) startMetrics {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		m := scrapeStartMetrics(t, port)
		if m.matches(want) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics: start-slot waits %v and kubelet_runtime_operations_total %v, want %v of each", m.waits, m.ops, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// scrapeStartMetrics reads nodekit_runtime_start_slot_wait_seconds and
// kubelet_runtime_operations_total from the agent's /metrics.
func scrapeStartMetrics(t *testing.T, port int) startMetrics {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	m := startMetrics{waits: map[string]uint64{}, waitSum: map[string]float64{}, slow: map[string]uint64{}, ops: map[string]float64{}}
	if f := families["nodekit_runtime_start_slot_wait_seconds"]; f != nil {
		for _, s := range f.GetMetric() {
			op, h := operationType(s), s.GetHistogram()
			m.waits[op], m.waitSum[op] = h.GetSampleCount(), h.GetSampleSum()
			if b := h.GetBucket(); len(b) > 0 {
				m.slow[op] = h.GetSampleCount() - b[0].GetCumulativeCount()
			}
		}
	}
	if f := families["kubelet_runtime_operations_total"]; f != nil {
		for _, s := range f.GetMetric() {
			m.ops[operationType(s)] = s.GetCounter().GetValue()
		}
	}
	return m
}

// operationType is the operation_type label of s.
func operationType(s *dto.Metric) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == "operation_type" {
			return l.GetValue()
		}
	}
	return ""
}
