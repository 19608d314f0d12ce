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

// KillPod stops every running container of runningPod in parallel, each with
// the pod's grace period, then stops each of its sandboxes (they are removed
// later by GarbageCollect). pod may be nil for a pod known only to the
// runtime: each container's grace period is then read from its annotations.
// gracePeriodOverride, when set, replaces the grace period; no container
// gets less than MinimumKillGracePeriod. Objects already gone are not
// errors. The returned error joins every failure, naming container and pod.
// KillPod blocks until all stops returned; it is idempotent.
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
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		steps []noderuntime.StepResult
	)
	for _, c := range runningPod.Containers {
		if c.State != noderuntime.ContainerStateRunning && c.State != noderuntime.ContainerStateUnknown {
			continue
		}
		wg.Go(func() {
			step := noderuntime.StepResult{Action: noderuntime.KillContainer, Target: c.Name}
			if err := m.killContainer(ctx, pod, c.ID, c.Name, gracePeriodOverride); err != nil {
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

// killContainer stops one container with its grace period. A container that
// is already gone counts as stopped.
func (m *Manager) killContainer(ctx context.Context, pod *corev1.Pod, id noderuntime.ContainerID, name string, gracePeriodOverride *int64) error {
	grace := m.gracePeriod(ctx, pod, id, gracePeriodOverride)
	m.log.V(2).Info("stopping container", "container", name, "containerID", id.ID, "gracePeriod", grace)
	err := m.rs.StopContainer(ctx, id.ID, grace)
	if err != nil && !crierrors.IsNotFound(err) {
		return fmt.Errorf("stop container %q (%s): %w: %w", name, id.ID, noderuntime.ErrKillContainer, err)
	}
	return nil
}

// gracePeriod returns the stop timeout in seconds: the override, else the
// pod's deletion grace period, else its termination grace period (from the
// container's annotations when pod is nil), else 30s; never below
// MinimumKillGracePeriod.
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
	minimum := int64((m.cfg.MinimumKillGracePeriod + time.Second - 1) / time.Second)
	return max(seconds, minimum)
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
