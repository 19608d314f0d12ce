//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// summary reads the agent's /stats/summary from its read-only port.
func (h *agentHarness) summary() (*statsapi.Summary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/stats/summary", h.port), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/stats/summary: %s: %s", resp.Status, body)
	}
	var s statsapi.Summary
	if err := json.Unmarshal(body, &s); err != nil {
		return nil, fmt.Errorf("decode summary: %w", err)
	}
	return &s, nil
}

// nodeMemoryAvailable polls the agent's summary until it reports the
// node's memory.availableBytes.
func (h *agentHarness) nodeMemoryAvailable() int64 {
	h.t.Helper()
	var lastErr error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		s, err := h.summary()
		if err == nil && s.Node.Memory != nil && s.Node.Memory.AvailableBytes != nil {
			return int64(*s.Node.Memory.AvailableBytes)
		}
		lastErr = err
	}
	h.t.Fatalf("the summary never reported the node's memory.availableBytes (%v)", lastErr)
	return 0
}

// nodeCondition is the status of the node's condition typ, "" when absent.
func nodeCondition(c clusterEnv, node string, typ corev1.NodeConditionType) (corev1.ConditionStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := c.admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == typ {
			return cond.Status, nil
		}
	}
	return "", nil
}

// waitNodeCondition polls the node until its condition typ has status
// want, and returns when it saw it.
func waitNodeCondition(t *testing.T, c clusterEnv, node string, typ corev1.NodeConditionType, want corev1.ConditionStatus, timeout time.Duration) time.Time {
	t.Helper()
	var last corev1.ConditionStatus
	var lastErr error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		last, lastErr = nodeCondition(c, node, typ)
		if lastErr == nil && last == want {
			return time.Now()
		}
	}
	t.Fatalf("node %s: %s did not become %s within %s (last %q, %v)", node, typ, want, timeout, last, lastErr)
	return time.Time{}
}

// evictedPod reports whether the pod failed with reason Evicted.
func evictedPod(p *corev1.Pod, err error) bool {
	return err == nil && p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted"
}

// hasDisruptionTarget reports whether the pod has a True DisruptionTarget
// condition.
func hasDisruptionTarget(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.DisruptionTarget && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// logTime is when the agent first logged a line holding msg (its log lines
// start with the local time of day, 15:04:05.000).
func (h *agentHarness) logTime(msg string) (time.Time, bool) {
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if !strings.Contains(line, msg) || len(line) < 12 {
			continue
		}
		now := time.Now()
		tod, err := time.ParseInLocation("15:04:05.000", line[:12], time.Local)
		if err != nil {
			return time.Time{}, false
		}
		at := time.Date(now.Year(), now.Month(), now.Day(), tod.Hour(), tod.Minute(), tod.Second(), tod.Nanosecond(), time.Local)
		if at.After(now) { // logged before midnight
			at = at.AddDate(0, 0, -1)
		}
		return at, true
	}
	return time.Time{}, false
}
