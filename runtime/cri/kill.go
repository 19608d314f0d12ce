package cri

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	crierrors "k8s.io/cri-api/pkg/errors"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// KillPod stops every running container of runningPod, then each of its
// sandboxes (they are removed later by GarbageCollect). Each container has a
// budget of the pod's grace period in whole seconds: its preStop hook (when
// a runner is set) and, for a sidecar, the wait for its turn come out of it,
// each in whole seconds rounded down as the kubelet counts them, and
// whatever is left, never less than MinimumKillGracePeriod, is the stop
// timeout. Regular and ephemeral
// containers stop in parallel at once; sidecars stop after every regular
// container has exited, in reverse spec order, each after the sidecars that
// follow it (or when its budget runs out). pod may be nil for a pod known
// only to the runtime: each container's grace period is then read from its
// annotations, and all stop in parallel. gracePeriodOverride, when set,
// replaces the grace period. Objects already gone are not errors. The
// returned error joins every failure, naming container and pod. KillPod
// blocks until all stops returned; it is idempotent.
func (m *Manager) KillPod(ctx context.Context, pod *corev1.Pod, runningPod *noderuntime.Pod, gracePeriodOverride *int64) error {
	result := &noderuntime.SyncResult{}
	m.killPodWithResult(ctx, pod, runningPod, gracePeriodOverride, result)
	return result.Error()
}

// killPodWithResult is KillPod recording one KillContainer step per container
// and one KillPodSandbox step per sandbox.
func (m *Manager) killPodWithResult(ctx context.Context, pod *corev1.Pod, runningPod *noderuntime.Pod, gracePeriodOverride *int64, result *noderuntime.SyncResult) {
	if runningPod == nil {
		return
	}
	podName := podFullName(runningPod.Name, runningPod.Namespace, runningPod.ID)
	if pod != nil {
		podName = formatPod(pod)
	}
	var toStop []*noderuntime.Container
	var names []string
	for _, c := range runningPod.Containers {
		if c.State == noderuntime.ContainerStateRunning || c.State == noderuntime.ContainerStateUnknown {
			toStop = append(toStop, c)
			names = append(names, c.Name)
		}
	}
	var order *terminationOrder
	if pod != nil && hasSidecars(pod) {
		order = newTerminationOrder(pod, names)
	}
	start := m.clk.Now()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		steps []noderuntime.StepResult
	)
	for _, c := range toStop {
		wg.Go(func() {
			step := noderuntime.StepResult{Action: noderuntime.KillContainer, Target: c.Name}
			if err := m.stopContainer(ctx, pod, c.ID, c.Name, "", gracePeriodOverride, start, order); err != nil {
				step.Err = fmt.Errorf("%w (pod %s)", err, podName)
				step.Message = step.Err.Error()
			}
			mu.Lock()
			steps = append(steps, step)
			mu.Unlock()
		})
	}
	wg.Wait()
	result.Steps = append(result.Steps, steps...)
	for _, sb := range runningPod.Sandboxes {
		err := m.rs.StopPodSandbox(ctx, sb.ID.ID)
		if err != nil && !crierrors.IsNotFound(err) {
			err = fmt.Errorf("stop sandbox %s of pod %s: %w", sb.ID.ID, podName, err)
			result.Add(noderuntime.KillPodSandbox, podName, err, err.Error())
			continue
		}
		result.Add(noderuntime.KillPodSandbox, podName, nil, "")
	}
}

// killContainer stops one container with its own grace period, outside any
// termination order (a container that is replaced or not wanted); message
// says why, in the Killing event.
func (m *Manager) killContainer(ctx context.Context, pod *corev1.Pod, id noderuntime.ContainerID, name, message string, gracePeriodOverride *int64) error {
	return m.stopContainer(ctx, pod, id, name, message, gracePeriodOverride, m.clk.Now(), nil)
}

// stopContainer stops one container within its budget, as the kubelet's
// killContainer does: the grace period in seconds, from which the time its
// preStop hook took (counted from start, when the kill began) and then the
// time it waited for its turn in order (nil for none) are taken away, each
// in whole seconds rounded down; neither runs once nothing is left. It is stopped with what remains, at least
// MinimumKillGracePeriod. A Killing event says why (message, or "Stopping
// container <name>"). A container that is already gone counts as stopped.
func (m *Manager) stopContainer(ctx context.Context, pod *corev1.Pod, id noderuntime.ContainerID, name, message string,
	gracePeriodOverride *int64, start time.Time, order *terminationOrder) error {
	grace := m.gracePeriod(ctx, pod, id, gracePeriodOverride)
	if message == "" {
		message = fmt.Sprintf("Stopping container %s", name)
	}
	m.containerEvent(pod, name, corev1.EventTypeNormal, EventKilling, "%s", message)
	began := start
	if grace > 0 {
		m.runPreStop(ctx, pod, id, name, began.Add(time.Duration(grace)*time.Second))
		now := m.clk.Now()
		grace -= wholeSeconds(now.Sub(began))
		began = now
	}
	if order != nil && grace > 0 {
		order.waitForTurn(ctx, m.clk, name, began.Add(time.Duration(grace)*time.Second))
		grace -= wholeSeconds(m.clk.Since(began))
	}
	timeout := max(grace, m.minimumGrace())
	m.log.V(2).Info("stopping container", "container", name, "containerID", id.ID, "gracePeriod", timeout)
	err := m.rs.StopContainer(ctx, id.ID, timeout)
	if err != nil && !crierrors.IsNotFound(err) {
		// As in the kubelet, the sidecars waiting on this container wait
		// out their budget: it may still run.
		return fmt.Errorf("stop container %q (%s): %w: %w", name, id.ID, noderuntime.ErrKillContainer, err)
	}
	if order != nil {
		order.stopped(name)
	}
	return nil
}

// wholeSeconds is d in whole seconds, rounded down (the kubelet takes
// int64 of a duration's Seconds()).
func wholeSeconds(d time.Duration) int64 { return int64(d / time.Second) }

// runPreStop runs the container's preStop hook, when it has one, bounded by
// the container's deadline (on the manager's clock): a hook still running
// then is cancelled and left behind, and the container is stopped. A
// failed hook is logged with a FailedPreStopHook event; the container is
// stopped anyway.
func (m *Manager) runPreStop(ctx context.Context, pod *corev1.Pod, id noderuntime.ContainerID, name string, deadline time.Time) {
	spec := containerSpec(pod, name)
	if spec == nil || spec.Lifecycle == nil || spec.Lifecycle.PreStop == nil {
		return
	}
	left := deadline.Sub(m.clk.Now())
	if left <= 0 {
		return
	}
	runner := m.preStopRunner()
	timer := m.clk.NewTimer(left)
	defer timer.Stop()
	hookCtx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runner.RunPreStop(hookCtx, pod, spec, id) }()
	log := m.log.WithValues("pod", formatPod(pod), "container", name, "containerID", id.ID)
	select {
	case err := <-done:
		if err != nil {
			log.Error(err, "preStop hook failed")
			// Not the message: a hook's output may hold secrets.
			m.containerEvent(pod, name, corev1.EventTypeWarning, EventFailedPreStopHook, "PreStopHook failed")
		}
	case <-timer.C():
		log.V(2).Info("preStop hook did not complete within the grace period", "gracePeriod", left)
	case <-ctx.Done():
	}
}

// minimumGrace is MinimumKillGracePeriod in whole seconds, rounded up.
func (m *Manager) minimumGrace() int64 {
	return int64((m.cfg.MinimumKillGracePeriod + time.Second - 1) / time.Second)
}

// gracePeriod returns the container's grace period in seconds: the
// override, else the pod's deletion grace period, else its termination grace
// period (from the container's annotations when pod is nil), else 30s. It
// may be below MinimumKillGracePeriod (even 0: then no preStop hook runs);
// stopContainer raises the stop timeout to it.
func (m *Manager) gracePeriod(ctx context.Context, pod *corev1.Pod, id noderuntime.ContainerID, override *int64) int64 {
	seconds := int64(defaultTerminationGracePeriod / time.Second)
	switch {
	case override != nil:
		seconds = *override
	case pod != nil && pod.DeletionGracePeriodSeconds != nil:
		seconds = *pod.DeletionGracePeriodSeconds
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		seconds = *pod.Spec.TerminationGracePeriodSeconds
	case pod == nil:
		if s, ok := m.annotatedGracePeriod(ctx, id); ok {
			seconds = s
		}
	}
	return seconds
}

// annotatedGracePeriod reads the grace period recorded on a container at
// creation: the pod's deletion grace period if it had one, else its
// termination grace period.
func (m *Manager) annotatedGracePeriod(ctx context.Context, id noderuntime.ContainerID) (int64, bool) {
	resp, err := m.rs.ContainerStatus(ctx, id.ID, false)
	if err != nil {
		m.log.V(4).Info("cannot read grace period of orphan container", "containerID", id.ID, "err", err.Error())
		return 0, false
	}
	a := resp.GetStatus().GetAnnotations()
	if s, ok := parseSeconds(a, noderuntime.AnnotationPodDeletionGracePeriod); ok {
		return s, true
	}
	return parseSeconds(a, noderuntime.AnnotationTerminationGracePeriod)
}

// containerSpec finds the named container among the pod's regular, init and
// ephemeral containers; nil when pod is nil or has no such container.
func containerSpec(pod *corev1.Pod, name string) *corev1.Container {
	if pod == nil {
		return nil
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return ephemeralAsContainer(&pod.Spec.EphemeralContainers[i])
		}
	}
	return nil
}
