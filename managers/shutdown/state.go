package shutdown

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nodekit/nodekit/internal/atomicfile"
	"github.com/nodekit/nodekit/internal/promutil"
)

// StateFile is the file, under Config.StateDirectory, that keeps the last
// shutdown's start and end times across restarts, the kubelet's.
const StateFile = "graceful_node_shutdown_state"

// state is StateFile's content, in the kubelet's JSON form.
type state struct {
	StartTime time.Time `json:"startTime"`
	EndTime   time.Time `json:"endTime"`
}

// metrics are the kubelet's graceful shutdown gauges.
type metrics struct {
	start, end prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	return &metrics{
		start: promutil.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "graceful_shutdown_start_time_seconds",
			Help: "Last graceful shutdown start time since unix epoch in seconds",
		})),
		end: promutil.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "graceful_shutdown_end_time_seconds",
			Help: "Last graceful shutdown end time since unix epoch in seconds",
		})),
	}
}

// set shows st in the gauges (0 for a zero time).
func (mt *metrics) set(st state) {
	mt.start.Set(unixSeconds(st.StartTime))
	mt.end.Set(unixSeconds(st.EndTime))
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.Unix())
}

// statePath is where the state is kept, "" for nowhere.
func (m *Default) statePath() string {
	if m.cfg.StateDirectory == "" {
		return ""
	}
	return filepath.Join(m.cfg.StateDirectory, StateFile)
}

// loadState reads the last shutdown's times; none (a zero state) without
// a file.
func (m *Default) loadState() (state, error) {
	var st state
	path := m.statePath()
	if path == "" {
		return st, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read graceful shutdown state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return state{}, fmt.Errorf("parse graceful shutdown state %s: %w", path, err)
	}
	return st, nil
}

// recordState shows st in the gauges and writes it, atomically, to the
// state file.
func (m *Default) recordState(st state) {
	m.metrics.set(st)
	path := m.statePath()
	if path == "" {
		return
	}
	if err := writeAtomic(path, st); err != nil {
		m.log.Error(err, "Failed to store graceful shutdown state")
	}
}

func writeAtomic(path string, st state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, b, 0o644); err != nil {
		return fmt.Errorf("write graceful shutdown state %s: %w", path, err)
	}
	return nil
}
