package cri

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	criapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/httpaction"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// ErrPostStartHook marks a container whose postStart hook failed: it was
// killed, and waits with reason "PostStartHookError" to be started again as
// its restart policy allows.
var ErrPostStartHook = errors.New("PostStartHookError")

// hookUserAgent is the User-Agent of httpGet hooks, as the kubelet's.
const hookUserAgent = "kube-lifecycle/1.37"

// maxHookBody bounds how much of an httpGet hook's response is read.
const maxHookBody = 10 << 10

// hookRunner runs lifecycle hook handlers: exec through the CRI ExecSync,
// httpGet against the pod (or the handler's host), and sleep on the clock.
// It is safe for concurrent use.
type hookRunner struct {
	rs   criapi.RuntimeService
	clk  clock.Clock
	http *http.Client
}

func newHookRunner(rs criapi.RuntimeService, clk clock.Clock) *hookRunner {
	return &hookRunner{rs: rs, clk: clk, http: &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet: hooks do not verify.
			DisableKeepAlives: true,
			Proxy:             nil,
		},
		// Redirects are followed as the standard client does; the kubelet
		// follows them too.
	}}
}

// hostFunc returns the host an httpGet hook without a host of its own
// talks to: the pod's IP.
type hostFunc func(ctx context.Context) (string, error)

// run runs one handler for container c (id) of pod and returns, on
// failure, the kubelet's message for it. It blocks until the handler ends
// or ctx ends.
func (h *hookRunner) run(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id noderuntime.ContainerID,
	handler *corev1.LifecycleHandler, host hostFunc) (string, error) {
	switch {
	case handler.Exec != nil:
		stdout, stderr, err := h.rs.ExecSync(ctx, id.ID, handler.Exec.Command, 0)
		if err != nil {
			out := string(stdout) + string(stderr)
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
				handler.Exec.Command, c.Name, formatPod(pod), err, out), fmt.Errorf("exec hook of container %q: %w", c.Name, err)
		}
		return "", nil
	case handler.HTTPGet != nil:
		if err := h.runHTTP(ctx, c, handler.HTTPGet, host); err != nil {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v",
				handler.HTTPGet.Path, c.Name, formatPod(pod), err), fmt.Errorf("httpGet hook of container %q: %w", c.Name, err)
		}
		return "", nil
	case handler.Sleep != nil:
		if err := h.sleep(ctx, time.Duration(handler.Sleep.Seconds)*time.Second); err != nil {
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v",
				handler.Sleep.Seconds, c.Name, formatPod(pod), err), fmt.Errorf("sleep hook of container %q: %w", c.Name, err)
		}
		return "", nil
	}
	err := fmt.Errorf("invalid handler for container %q: only exec, httpGet and sleep are supported", c.Name)
	return fmt.Sprintf("Cannot run handler: %v", err), err
}

// sleep waits d on the clock, or fails when ctx ends first.
func (h *hookRunner) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := h.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("container terminated before sleep hook finished: %w", ctx.Err())
	}
}

// runHTTP sends the hook's GET request. Any response counts as success, as
// in the kubelet; only a request that fails is an error.
func (h *hookRunner) runHTTP(ctx context.Context, c *corev1.Container, get *corev1.HTTPGetAction, host hostFunc) error {
	req, err := newHookRequest(ctx, c, get, host)
	if err != nil {
		return err
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHookBody))
	return resp.Body.Close()
}

// newHookRequest builds an httpGet hook's request (httpaction.NewRequest,
// as the kubelet builds hooks' and probes' alike): its port a number, or
// the name of a container port (80 when empty), its host its own or else
// the pod's, User-Agent hookUserAgent unless the hook sets one.
func newHookRequest(ctx context.Context, c *corev1.Container, get *corev1.HTTPGetAction, host hostFunc) (*http.Request, error) {
	port, err := hookPort(get.Port, c)
	if err != nil {
		return nil, err
	}
	return httpaction.NewRequest(ctx, get, host, port, hookUserAgent)
}

// hookPort resolves a hook's port: a number, a numeric string, or the name
// of one of the container's ports; an empty name means 80.
func hookPort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	if p.StrVal == "" {
		return 80, nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("couldn't find port %q in container %q", p.StrVal, c.Name)
}

// hookHost returns how hooks of pod find its IP: known (the IPs SyncPod
// has) or else the runtime's pod status; a hostNetwork pod without one is
// reached on 127.0.0.1.
func (m *Manager) hookHost(pod *corev1.Pod, known []string) hostFunc {
	return func(ctx context.Context) (string, error) {
		ips := known
		if len(ips) == 0 && !pod.Spec.HostNetwork {
			st, err := m.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
			if err != nil {
				return "", fmt.Errorf("pod IP of %s: %w", formatPod(pod), err)
			}
			ips = st.IPs
		}
		switch {
		case len(ips) > 0:
			return ips[0], nil
		case pod.Spec.HostNetwork:
			return "127.0.0.1", nil
		}
		return "", fmt.Errorf("failed to find networking container of pod %s: it has no IP", formatPod(pod))
	}
}

// runPostStart runs c's postStart hook right after the container started.
// When it fails, the container is killed (with the pod's grace period, its
// preStop hook included, as the kubelet does), a FailedPostStartHook event
// is recorded and the start fails with ErrPostStartHook. It reports whether
// the container may go on running.
func (m *Manager) runPostStart(ctx context.Context, ps *podStart, c *corev1.Container, id noderuntime.ContainerID) bool {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return true
	}
	msg, err := m.hooks.run(ctx, ps.pod, c, id, c.Lifecycle.PostStart, m.hookHost(ps.pod, ps.podIPs))
	if err == nil {
		return true
	}
	m.log.Error(err, "postStart hook failed", "pod", formatPod(ps.pod), "container", c.Name, "containerID", id.ID)
	// The message is not put in the event, which anyone may read: a hook's
	// output may hold secrets. The container's status shows it.
	m.containerEvent(ps.pod, c.Name, corev1.EventTypeWarning, EventFailedPostStartHook, "PostStartHook failed")
	if kerr := m.killContainer(ctx, ps.pod, id, c.Name, "FailedPostStartHook", nil); kerr != nil {
		m.log.Error(kerr, "cannot kill container after its postStart hook failed", "pod", formatPod(ps.pod), "container", c.Name)
	}
	ps.result.Add(noderuntime.StartContainer, c.Name, fmt.Errorf("%w: %s", ErrPostStartHook, msg), msg)
	return false
}

// builtinPreStop is the PreStopRunner the manager uses when none is set: it
// runs the hook with the manager's own hook runner.
type builtinPreStop struct{ m *Manager }

// RunPreStop implements runtime.PreStopRunner.
func (b builtinPreStop) RunPreStop(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id noderuntime.ContainerID) error {
	_, err := b.m.hooks.run(ctx, pod, c, id, c.Lifecycle.PreStop, b.m.hookHost(pod, nil))
	return err
}
