package cri

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// podStart is what starting the containers of one pod in one SyncPod needs.
type podStart struct {
	pod       *corev1.Pod
	status    *noderuntime.PodStatus
	sandboxID string
	sbCfg     *runtimeapi.PodSandboxConfig
	podIPs    []string
	volumes   podVolumes
	result    *noderuntime.SyncResult
}

// mkdirAll creates a directory the agent owns, with its parents.
func mkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

// startContainer waits out CrashLoopBackOff, ensures the image, then creates
// and starts one container (regular, init or ephemeral; target names the
// container whose process namespace an ephemeral container joins), runs its
// postStart hook, and records the outcome as a StartContainer step and as
// the kubelet's events (Created, Started, Failed). It reports whether the
// container started.
func (m *Manager) startContainer(ctx context.Context, ps *podStart, c *corev1.Container, target string) bool {
	pod, result := ps.pod, ps.result
	if m.inBackOff(pod, c, ps.status, result) {
		return false
	}
	imageRef, ok := m.ensureImage(ctx, pod, c, ps.sbCfg, result)
	if !ok {
		if reason, _ := result.Waiting(c.Name); reason != "" {
			m.containerEvent(pod, c.Name, corev1.EventTypeWarning, EventFailed, "Error: %s", reason)
		}
		return false
	}
	restartCount := m.nextRestartCount(pod, c, ps.status)
	cfg, err := m.containerConfig(ctx, pod, c, imageRef, restartCount, ps.podIPs)
	if err == nil {
		err = m.addMounts(ps, c, cfg)
	}
	if err == nil && target != "" {
		err = targetNamespace(cfg, ps.status, c.Name, target)
	}
	if err == nil {
		if err = mkdirBelow(ps.sbCfg.GetLogDirectory(), c.Name); err != nil {
			err = fmt.Errorf("log directory of container %q: %w: %w", c.Name, noderuntime.ErrCreateContainer, err)
		}
	}
	if err != nil {
		return m.failStart(pod, c, err, result)
	}
	m.log.V(2).Info("starting container", "pod", formatPod(pod), "container", c.Name, "restartCount", restartCount)
	id, err := m.rs.CreateContainer(ctx, ps.sandboxID, cfg, ps.sbCfg)
	if err != nil {
		return m.failStart(pod, c, fmt.Errorf("create container %q of pod %s: %w: %w", c.Name, formatPod(pod), noderuntime.ErrCreateContainer, err), result)
	}
	m.containerEvent(pod, c.Name, corev1.EventTypeNormal, EventCreated, "Created container: %s", c.Name)
	if err := m.rs.StartContainer(ctx, id); err != nil {
		return m.failStart(pod, c, fmt.Errorf("start container %q (%s) of pod %s: %w: %w", c.Name, id, formatPod(pod), noderuntime.ErrRunContainer, err), result)
	}
	m.containerEvent(pod, c.Name, corev1.EventTypeNormal, EventStarted, "Started container %s", c.Name)
	m.linkContainerLog(ps.sbCfg, cfg, id)
	if !m.runPostStart(ctx, ps, c, m.containerID(id)) {
		return false
	}
	result.Add(noderuntime.StartContainer, c.Name, nil, "")
	return true
}

// failStart records a container that could not be created or started: a
// failed StartContainer step and a Failed event. It returns false.
func (m *Manager) failStart(pod *corev1.Pod, c *corev1.Container, err error, result *noderuntime.SyncResult) bool {
	result.Add(noderuntime.StartContainer, c.Name, err, err.Error())
	m.containerEvent(pod, c.Name, corev1.EventTypeWarning, EventFailed, "Error: %v", err)
	return false
}

// addMounts gives the container its volume mounts and the file that backs
// its termination message.
func (m *Manager) addMounts(ps *podStart, c *corev1.Container, cfg *runtimeapi.ContainerConfig) error {
	mounts, err := containerMounts(c, ps.volumes, envLookup(cfg.GetEnvs()))
	if err == nil {
		mounts, err = m.withEtcHosts(ps, c, mounts)
	}
	if err != nil {
		return err
	}
	if c.TerminationMessagePath != "" {
		// As the kubelet does, a file that cannot be made only costs the
		// container its termination message.
		hostPath, err := m.newTerminationMessageFile(ps.pod, c)
		if err != nil {
			m.log.Error(err, "cannot create termination message file", "pod", formatPod(ps.pod), "container", c.Name)
		} else {
			mounts = append(mounts, &runtimeapi.Mount{HostPath: hostPath, ContainerPath: c.TerminationMessagePath})
		}
	}
	cfg.Mounts = mounts
	return nil
}

// targetNamespace makes an ephemeral container join the process namespace
// of the target container, which must exist.
func targetNamespace(cfg *runtimeapi.ContainerConfig, status *noderuntime.PodStatus, name, target string) error {
	cs := status.FindContainerStatusByName(target)
	if cs == nil {
		return fmt.Errorf("%w: ephemeral container %q: target container %q not found", noderuntime.ErrConfig, name, target)
	}
	ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if ns == nil {
		return nil
	}
	ns.Pid = runtimeapi.NamespaceMode_TARGET
	ns.TargetId = cs.ID.ID
	return nil
}

// nextRestartCount is one more than the newest instance's restart count; with
// no instance left in the runtime, the log files of earlier instances tell.
func (m *Manager) nextRestartCount(pod *corev1.Pod, c *corev1.Container, status *noderuntime.PodStatus) int {
	if cs := status.FindContainerStatusByName(c.Name); cs != nil {
		return cs.RestartCount + 1
	}
	entries, err := m.readContainerLogDir(pod.Namespace, pod.Name, pod.UID, c.Name)
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
		m.podEvent(pod, corev1.EventTypeWarning, EventBackOff, "Back-off restarting failed container %s in pod %s", c.Name, formatPod(pod))
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
