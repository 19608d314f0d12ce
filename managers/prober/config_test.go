package prober

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "the zero value is valid", cfg: Config{}},
		{name: "a negative update buffer is rejected", cfg: Config{UpdateBuffer: -1}, want: "updateBuffer -1 must not be negative"},
		{name: "negative retries are rejected", cfg: Config{Retries: -1}, want: "retries -1 must not be negative"},
		{name: "a negative restart grace period is rejected", cfg: Config{RestartGracePeriod: -time.Second}, want: "restartGracePeriod -1s must not be negative"},
	}
	for _, tc := range cases {
		err := tc.cfg.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.want)
		}
	}
	d := Config{}.withDefaults()
	if d.UpdateBuffer != 20 || d.Retries != 3 || d.UserAgent != "kube-probe/1.37" || d.RestartGracePeriod != 10*time.Second {
		t.Errorf("defaults %+v, want the kubelet's", d)
	}
}

func TestTerminationGracePeriod(t *testing.T) {
	t.Parallel()
	pod := newPod(
		corev1.Container{Name: "own", LivenessProbe: execProbe(func(p *corev1.Probe) { p.TerminationGracePeriodSeconds = ptr[int64](5) }),
			ReadinessProbe: execProbe(func(p *corev1.Probe) { p.TerminationGracePeriodSeconds = ptr[int64](6) })},
		corev1.Container{Name: "plain", LivenessProbe: execProbe()},
	)
	pod.Spec.InitContainers = []corev1.Container{{Name: "side", StartupProbe: execProbe(func(p *corev1.Probe) { p.TerminationGracePeriodSeconds = ptr[int64](7) })}}
	pod.Spec.TerminationGracePeriodSeconds = ptr[int64](30)
	cases := []struct {
		name      string
		container string
		probe     ProbeType
		want      int64
	}{
		{"a liveness probe's own grace period wins", "own", Liveness, 5},
		{"a readiness probe's grace period is ignored", "own", Readiness, 30},
		{"a probe without one takes the pod's", "plain", Liveness, 30},
		{"an init container's startup probe's grace period wins", "side", Startup, 7},
		{"an unknown container takes the pod's", "nope", Liveness, 30},
	}
	for _, tc := range cases {
		if got := TerminationGracePeriod(pod, tc.container, tc.probe); got == nil || *got != tc.want {
			t.Errorf("%s: got %v, want %d", tc.name, got, tc.want)
		}
	}
	pod.Spec.TerminationGracePeriodSeconds = nil
	if got := TerminationGracePeriod(pod, "plain", Liveness); got != nil {
		t.Errorf("without any grace period got %d, want nil", *got)
	}
}

func TestResultsCacheSendsOnlyChanges(t *testing.T) {
	t.Parallel()
	c := newResultsCache(Startup, 10)
	ctx := context.Background()
	c.set(ctx, nil, ctrID, Unknown, podUID)
	c.set(ctx, nil, ctrID, Unknown, podUID)
	c.set(ctx, nil, ctrID, Success, podUID)
	if n := len(c.Updates()); n != 2 {
		t.Errorf("%d updates, want 2 (the repeated Unknown is not a change)", n)
	}
	if u := <-c.Updates(); u != (Update{ContainerID: ctrID, Result: Unknown, PodUID: podUID, Probe: Startup}) {
		t.Errorf("first update %+v", u)
	}
	c.remove(ctrID)
	if _, ok := c.Get(ctrID); ok {
		t.Error("Get found a removed result")
	}
}

func TestStringers(t *testing.T) {
	t.Parallel()
	for v, want := range map[interface{ String() string }]string{
		Unknown: "Unknown", Success: "Success", Failure: "Failure", Result(9): "Unknown",
		Liveness: "Liveness", Readiness: "Readiness", Startup: "Startup", ProbeType(9): "Unknown",
	} {
		if got := v.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

func TestLogRecorderLogsWarnings(t *testing.T) {
	t.Parallel()
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	r := LogRecorder{Log: log}
	ref := containerRef(newPod(), &corev1.Container{Name: "app"}, false)
	r.Eventf(ref, corev1.EventTypeWarning, ReasonUnhealthy, "%s probe failed: %s", Liveness, "boom")
	r.Eventf(ref, corev1.EventTypeNormal, "Other", "hidden at V(0)")
	if len(lines) != 1 || !strings.Contains(lines[0], `"message"="Liveness probe failed: boom"`) ||
		!strings.Contains(lines[0], `"fieldPath"="spec.containers{app}"`) {
		t.Errorf("logged %q, want one warning with its message and field path", lines)
	}
}
