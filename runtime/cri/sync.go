package cri

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// SyncPod brings the pod's runtime state to its spec, in the kubelet's
// order: compute the actions; kill the pod when its sandbox changed,
// otherwise kill unwanted containers; create the sandbox; start containers.
// Every step is recorded in the result, whose failed steps wrap the runtime
// package's sentinel errors. status is the pod's latest runtime status (nil
// for none). SyncPod blocks for the runtime calls; it must not run
// concurrently with SyncPod or KillPod for the same pod.
func (m *Manager) SyncPod(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus) *noderuntime.SyncResult {
	result := &noderuntime.SyncResult{}
	if status == nil {
		status = &noderuntime.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	}
	actions := computePodActions(pod, status)
	log := m.log.WithValues("pod", formatPod(pod))
	log.V(4).Info("computed pod actions", "actions", actions.String())

	if actions.KillPod {
		if actions.CreateSandbox && actions.SandboxID != "" {
			log.V(2).Info("pod sandbox changed, it will be killed and re-created", "sandbox", actions.SandboxID)
		}
		m.killPodWithResult(ctx, pod, runningPod(status), nil, result)
		if result.Error() != nil {
			return result
		}
	} else if !m.killUnwanted(ctx, pod, actions, result) {
		return result
	}

	podIPs := status.IPs
	sandboxID := actions.SandboxID
	var sbCfg *runtimeapi.PodSandboxConfig
	if actions.CreateSandbox {
		id, cfg, ips, ok := m.createSandbox(ctx, pod, actions.Attempt, result)
		if !ok {
			return result
		}
		sandboxID, sbCfg = id, cfg
		if !pod.Spec.HostNetwork {
			podIPs = ips
		}
	}
	if len(actions.ContainersToStart) == 0 {
		return result
	}
	if sbCfg == nil {
		cfg, err := m.sandboxConfig(pod, actions.Attempt)
		if err != nil {
			result.Fail(fmt.Errorf("generate sandbox config of pod %s: %w: %w", formatPod(pod), noderuntime.ErrConfig, err))
			return result
		}
		sbCfg = cfg
	}
	for _, idx := range actions.ContainersToStart {
		m.startContainer(ctx, pod, &pod.Spec.Containers[idx], status, sandboxID, sbCfg, podIPs, result)
	}
	return result
}

// runningPod is the part of status that KillPod stops.
func runningPod(status *noderuntime.PodStatus) *noderuntime.Pod {
	return status.ToPod()
}

// killUnwanted stops the containers the actions name, in a stable order, and
// stops at the first failure. It reports whether all were stopped.
func (m *Manager) killUnwanted(ctx context.Context, pod *corev1.Pod, actions podActions, result *noderuntime.SyncResult) bool {
	ids := make([]noderuntime.ContainerID, 0, len(actions.ContainersToKill))
	for id := range actions.ContainersToKill {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].ID < ids[j].ID })
	for _, id := range ids {
		k := actions.ContainersToKill[id]
		m.log.V(2).Info("killing unwanted container", "pod", formatPod(pod), "container", k.Name, "containerID", id.ID, "reason", k.Reason, "message", k.Message)
		if err := m.killContainer(ctx, pod, id, k.Name, nil); err != nil {
			result.Add(noderuntime.KillContainer, k.Name, err, err.Error())
			return false
		}
		result.Add(noderuntime.KillContainer, k.Name, nil, k.Message)
	}
	return true
}

// createSandbox runs a new sandbox and returns its ID, its config and its
// addresses.
func (m *Manager) createSandbox(ctx context.Context, pod *corev1.Pod, attempt uint32, result *noderuntime.SyncResult) (string, *runtimeapi.PodSandboxConfig, []string, bool) {
	target := formatPod(pod)
	fail := func(err error, msg string) (string, *runtimeapi.PodSandboxConfig, []string, bool) {
		result.Add(noderuntime.CreatePodSandbox, target, err, msg)
		return "", nil, nil, false
	}
	cfg, err := m.sandboxConfig(pod, attempt)
	if err != nil {
		msg := fmt.Sprintf("Generate sandbox config for pod %q failed: %v", target, err)
		return fail(fmt.Errorf("sandbox config of pod %s: %w: %w", target, noderuntime.ErrCreatePodSandbox, err), msg)
	}
	if err := os.MkdirAll(cfg.GetLogDirectory(), 0o755); err != nil {
		msg := fmt.Sprintf("Create pod log directory for pod %q failed: %v", target, err)
		return fail(fmt.Errorf("log directory of pod %s: %w: %w", target, noderuntime.ErrCreatePodSandbox, err), msg)
	}
	m.log.V(2).Info("creating pod sandbox", "pod", target, "attempt", attempt)
	id, err := m.rs.RunPodSandbox(ctx, cfg, m.cfg.RuntimeHandler)
	if err != nil {
		msg := fmt.Sprintf("Failed to create pod sandbox: %v", err)
		return fail(fmt.Errorf("run sandbox of pod %s: %w: %w", target, noderuntime.ErrCreatePodSandbox, err), msg)
	}
	result.Add(noderuntime.CreatePodSandbox, target, nil, "")
	resp, err := m.rs.PodSandboxStatus(ctx, id, false)
	if err != nil {
		result.Fail(fmt.Errorf("status of new sandbox %s of pod %s: %w", id, target, err))
		return "", nil, nil, false
	}
	return id, cfg, sandboxIPs(resp.GetStatus()), true
}

// startContainer waits out CrashLoopBackOff, ensures the image, then creates
// and starts one container, recording the outcome as a StartContainer step.
func (m *Manager) startContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, status *noderuntime.PodStatus,
	sandboxID string, sbCfg *runtimeapi.PodSandboxConfig, podIPs []string, result *noderuntime.SyncResult) {
	if m.inBackOff(pod, c, status, result) {
		return
	}
	imageRef, ok := m.ensureImage(ctx, pod, c, sbCfg, result)
	if !ok {
		return
	}
	restartCount := m.nextRestartCount(pod, c, status)
	cfg, err := m.containerConfig(pod, c, imageRef, restartCount, podIPs)
	if err != nil {
		result.Add(noderuntime.StartContainer, c.Name, err, err.Error())
		return
	}
	if err := os.MkdirAll(filepath.Join(sbCfg.GetLogDirectory(), c.Name), 0o755); err != nil {
		err = fmt.Errorf("log directory of container %q: %w: %w", c.Name, noderuntime.ErrCreateContainer, err)
		result.Add(noderuntime.StartContainer, c.Name, err, err.Error())
		return
	}
	m.log.V(2).Info("starting container", "pod", formatPod(pod), "container", c.Name, "restartCount", restartCount)
	id, err := m.rs.CreateContainer(ctx, sandboxID, cfg, sbCfg)
	if err != nil {
		err = fmt.Errorf("create container %q of pod %s: %w: %w", c.Name, formatPod(pod), noderuntime.ErrCreateContainer, err)
		result.Add(noderuntime.StartContainer, c.Name, err, err.Error())
		return
	}
	if err := m.rs.StartContainer(ctx, id); err != nil {
		err = fmt.Errorf("start container %q (%s) of pod %s: %w: %w", c.Name, id, formatPod(pod), noderuntime.ErrRunContainer, err)
		result.Add(noderuntime.StartContainer, c.Name, err, err.Error())
		return
	}
	result.Add(noderuntime.StartContainer, c.Name, nil, "")
}

// nextRestartCount is one more than the newest instance's restart count; with
// no instance left in the runtime, the log files of earlier instances tell.
func (m *Manager) nextRestartCount(pod *corev1.Pod, c *corev1.Container, status *noderuntime.PodStatus) int {
	if cs := status.FindContainerStatusByName(c.Name); cs != nil {
		return cs.RestartCount + 1
	}
	entries, err := os.ReadDir(filepath.Join(m.podLogDir(pod.Namespace, pod.Name, pod.UID), c.Name))
	if err != nil {
		return 0
	}
	next := 0
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".log"))
		if err == nil && strings.HasSuffix(e.Name(), ".log") && n >= next {
			next = n + 1
		}
	}
	return next
}

// backOffKey identifies a container's CrashLoopBackOff entry; a new spec
// hash starts a fresh backoff.
func backOffKey(pod *corev1.Pod, c *corev1.Container) string {
	return fmt.Sprintf("%s_%s_%s_%s_%x", pod.Name, pod.Namespace, pod.UID, c.Name, hashContainer(c))
}

// inBackOff applies CrashLoopBackOff to a container that exited before:
// while the delay since its newest exit has not passed, it records a failed
// StartContainer step and returns true; otherwise it advances the delay.
func (m *Manager) inBackOff(pod *corev1.Pod, c *corev1.Container, status *noderuntime.PodStatus, result *noderuntime.SyncResult) bool {
	var exited *noderuntime.ContainerStatus
	for _, cs := range status.ContainerStatuses {
		if cs.Name == c.Name && cs.State == noderuntime.ContainerStateExited {
			exited = cs
			break
		}
	}
	if exited == nil {
		return false
	}
	key := backOffKey(pod, c)
	if m.backOff.IsInBackOffSince(key, exited.FinishedAt) {
		delay := m.backOff.Get(key)
		msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, c.Name, formatPod(pod))
		result.Steps = append(result.Steps, noderuntime.StepResult{
			Action: noderuntime.StartContainer, Target: c.Name, Message: msg,
			Err:        fmt.Errorf("%w: %s", noderuntime.ErrCrashLoopBackOff, msg),
			RetryAfter: delay - m.clk.Since(exited.FinishedAt),
		})
		m.log.V(4).Info("back-off restarting failed container", "pod", formatPod(pod), "container", c.Name, "delay", delay)
		return true
	}
	m.backOff.Next(key, exited.FinishedAt)
	return false
}
