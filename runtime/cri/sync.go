package cri

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crierrors "k8s.io/cri-api/pkg/errors"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// SyncPod brings the pod's runtime state to its spec, in the kubelet's
// order: compute the actions; kill the pod when its sandbox changed (and
// remove its init containers, so a new sandbox runs them again), otherwise
// kill unwanted containers; create the sandbox; look up the pod's volumes;
// start ephemeral containers, then init containers (stopping at the first
// regular init container that fails to start), then regular containers.
// Every step is recorded in the result, whose failed steps wrap the runtime
// package's sentinel errors. status is the pod's latest runtime status (nil
// for none). SyncPod blocks for the runtime calls; it must not run
// concurrently with SyncPod or KillPod for the same pod.
func (m *Manager) SyncPod(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus) *noderuntime.SyncResult {
	result := &noderuntime.SyncResult{}
	if status == nil {
		status = &noderuntime.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	}
	actions := computePodActions(pod, status, m.probes())
	log := m.log.WithValues("pod", formatPod(pod))
	log.V(4).Info("computed pod actions", "actions", actions.String())
	if !m.killForSync(ctx, pod, status, actions, result) {
		return result
	}

	ps := &podStart{pod: pod, status: status, sandboxID: actions.SandboxID, podIPs: status.IPs, result: result}
	if !actions.CreateSandbox {
		m.cgroups.observe(pod) // a new sandbox's pod cgroup counts it
	}
	if actions.CreateSandbox {
		id, cfg, ips, ok := m.createSandbox(ctx, pod, actions.Attempt, result)
		if !ok {
			return result
		}
		ps.sandboxID, ps.sbCfg = id, cfg
		if !pod.Spec.HostNetwork {
			ps.podIPs = ips
		}
	}
	if !actions.startsAny() {
		return result
	}
	if ps.sbCfg == nil {
		cfg, err := m.sandboxConfig(pod, actions.Attempt)
		if err != nil {
			result.Fail(fmt.Errorf("generate sandbox config of pod %s: %w: %w", formatPod(pod), noderuntime.ErrConfig, err))
			return result
		}
		ps.sbCfg = cfg
	}
	vols, err := m.resolveVolumes(ctx, pod)
	if err != nil {
		m.failStarts(pod, actions, err, result)
		return result
	}
	ps.volumes = vols
	m.startContainers(ctx, ps, actions)
	return result
}

// startContainers starts what the actions name, ephemeral containers first.
// A regular init container that fails to start ends the sync; a sidecar that
// fails does not hold back the others.
func (m *Manager) startContainers(ctx context.Context, ps *podStart, actions podActions) {
	pod := ps.pod
	for _, idx := range actions.EphemeralContainersToStart {
		ec := &pod.Spec.EphemeralContainers[idx]
		m.startContainer(ctx, ps, ephemeralAsContainer(ec), ec.TargetContainerName)
	}
	for _, idx := range actions.InitContainersToStart {
		c := &pod.Spec.InitContainers[idx]
		if !m.startContainer(ctx, ps, c, "") && !noderuntime.IsSidecar(c) {
			return
		}
	}
	for _, idx := range actions.ContainersToStart {
		m.startContainer(ctx, ps, &pod.Spec.Containers[idx], "")
	}
}

// startsAny reports whether the actions start any container.
func (a podActions) startsAny() bool {
	return len(a.EphemeralContainersToStart)+len(a.InitContainersToStart)+len(a.ContainersToStart) > 0
}

// failStarts records err as the failed start of every container the actions
// would start, each with a Failed event.
func (m *Manager) failStarts(pod *corev1.Pod, a podActions, err error, result *noderuntime.SyncResult) {
	add := func(name string) {
		result.Add(noderuntime.StartContainer, name, err, err.Error())
		m.containerEvent(pod, name, corev1.EventTypeWarning, EventFailed, "Error: %v", err)
	}
	for _, i := range a.EphemeralContainersToStart {
		add(pod.Spec.EphemeralContainers[i].Name)
	}
	for _, i := range a.InitContainersToStart {
		add(pod.Spec.InitContainers[i].Name)
	}
	for _, i := range a.ContainersToStart {
		add(pod.Spec.Containers[i].Name)
	}
}

// killForSync stops what must stop before anything starts: the whole pod
// when the actions say so (and, before a new sandbox, its init containers
// are removed so that they run again), else the unwanted containers. It
// reports whether the sync may go on.
func (m *Manager) killForSync(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus, actions podActions, result *noderuntime.SyncResult) bool {
	if !actions.KillPod {
		return m.killUnwanted(ctx, pod, actions, result)
	}
	if actions.CreateSandbox && actions.SandboxID != "" {
		m.log.V(2).Info("pod sandbox changed, it will be killed and re-created", "pod", formatPod(pod), "sandbox", actions.SandboxID)
		m.podEvent(pod, corev1.EventTypeNormal, EventSandboxChanged, "Pod sandbox changed, it will be killed and re-created.")
	}
	m.killPodWithResult(ctx, pod, status.ToPod(), nil, result)
	if result.Error() != nil {
		return false
	}
	if actions.CreateSandbox {
		return m.purgeInitContainers(ctx, pod, status, result)
	}
	return true
}

// purgeInitContainers removes every instance of the pod's init containers,
// so that the statuses of a sandbox being replaced do not count as progress
// in the new one. A failure ends the sync; it is retried.
func (m *Manager) purgeInitContainers(ctx context.Context, pod *corev1.Pod, status *noderuntime.PodStatus, result *noderuntime.SyncResult) bool {
	names := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		names[pod.Spec.InitContainers[i].Name] = true
	}
	for _, cs := range status.ContainerStatuses {
		if !names[cs.Name] {
			continue
		}
		m.log.V(4).Info("removing init container before the sandbox is re-created", "pod", formatPod(pod), "container", cs.Name, "containerID", cs.ID.ID)
		if err := m.rs.RemoveContainer(ctx, cs.ID.ID); err != nil && !crierrors.IsNotFound(err) {
			result.Fail(fmt.Errorf("remove init container %q (%s) of pod %s: %w", cs.Name, cs.ID.ID, formatPod(pod), err))
			return false
		}
	}
	return true
}

// killUnwanted stops the containers the actions name, in a stable order, and
// stops at the first failure; one killed for a failed probe gets the probe's
// terminationGracePeriodSeconds. It reports whether all were stopped.
func (m *Manager) killUnwanted(ctx context.Context, pod *corev1.Pod, actions podActions, result *noderuntime.SyncResult) bool {
	ids := make([]noderuntime.ContainerID, 0, len(actions.ContainersToKill))
	for id := range actions.ContainersToKill {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].ID < ids[j].ID })
	for _, id := range ids {
		k := actions.ContainersToKill[id]
		m.log.V(2).Info("killing unwanted container", "pod", formatPod(pod), "container", k.Name, "containerID", id.ID, "reason", k.Reason, "message", k.Message)
		if err := m.killContainer(ctx, pod, id, k.Name, k.Message, probeGracePeriod(pod, k)); err != nil {
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
		m.podEvent(pod, corev1.EventTypeWarning, EventFailedCreatePodSandBox, "%s", msg)
		return "", nil, nil, false
	}
	cfg, err := m.sandboxConfig(pod, attempt)
	if err != nil {
		msg := fmt.Sprintf("Generate sandbox config for pod %q failed: %v", target, err)
		return fail(fmt.Errorf("sandbox config of pod %s: %w: %w", target, noderuntime.ErrCreatePodSandbox, err), msg)
	}
	handler, err := m.sandboxHandler(ctx, pod)
	if err != nil {
		return fail(fmt.Errorf("sandbox of pod %s: %w: %w", target, noderuntime.ErrCreatePodSandbox, err), fmt.Sprintf("Failed to create pod sandbox: %v", err))
	}
	if err := mkdirAll(cfg.GetLogDirectory()); err != nil {
		msg := fmt.Sprintf("Create pod log directory for pod %q failed: %v", target, err)
		return fail(fmt.Errorf("log directory of pod %s: %w: %w", target, noderuntime.ErrCreatePodSandbox, err), msg)
	}
	if err := m.ensurePodCgroup(pod); err != nil {
		msg := fmt.Sprintf("Failed to ensure that the pod %q cgroups exist and are correctly applied: %v", target, err)
		return fail(fmt.Errorf("cgroup of pod %s: %w: %w", target, noderuntime.ErrCreatePodSandbox, err), msg)
	}
	m.log.V(2).Info("creating pod sandbox", "pod", target, "attempt", attempt)
	id, err := m.rs.RunPodSandbox(ctx, cfg, handler)
	if err != nil {
		msg := fmt.Sprintf("Failed to create pod sandbox: %v", err)
		return fail(fmt.Errorf("run sandbox of pod %s: %w: %w", target, noderuntime.ErrCreatePodSandbox, err), msg)
	}
	m.split.noteCreated(pod.UID)
	result.Add(noderuntime.CreatePodSandbox, target, nil, "")
	resp, err := m.rs.PodSandboxStatus(ctx, id, false)
	if err != nil {
		result.Fail(fmt.Errorf("status of new sandbox %s of pod %s: %w", id, target, err))
		return "", nil, nil, false
	}
	return id, cfg, sandboxIPs(resp.GetStatus()), true
}

// probeGracePeriod is the grace period of a container killed for a failed
// liveness or startup probe that sets terminationGracePeriodSeconds, unless
// the pod is being deleted (its deletion grace period wins); nil otherwise.
func probeGracePeriod(pod *corev1.Pod, k containerToKill) *int64 {
	c := containerSpec(pod, k.Name)
	if c == nil || pod.DeletionGracePeriodSeconds != nil {
		return nil
	}
	var probe *corev1.Probe
	switch k.Reason {
	case killReasonLivenessProbe:
		probe = c.LivenessProbe
	case killReasonStartupProbe:
		probe = c.StartupProbe
	}
	if probe == nil {
		return nil
	}
	return probe.TerminationGracePeriodSeconds
}
