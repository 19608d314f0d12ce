package cri

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// fuzzPodAndStatus builds a pod (1-4 containers, 0-3 init containers of
// which some are sidecars, 0-2 ephemeral containers) and a runtime status
// for it (0-3 sandboxes, 0-8 container statuses, some of containers that are
// not in the spec, some with a stale hash) from the fuzzer's bytes.
func fuzzPodAndStatus(data []byte) (*corev1.Pod, *noderuntime.PodStatus) {
	b := &fuzzBytes{data: data}
	pod := newPod("u1")
	pod.Spec.RestartPolicy = pick(b, corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)
	pod.Spec.HostNetwork = b.intn(4) == 0
	if b.intn(8) == 0 {
		pod.DeletionTimestamp = &metav1.Time{}
	}
	always := corev1.ContainerRestartPolicyAlways
	var names []string
	for i := range 1 + b.intn(4) {
		c := corev1.Container{Name: fmt.Sprintf("c%d", i), Image: pick(b, "a:1", "b:1")}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
		names = append(names, c.Name)
	}
	for i := range b.intn(4) {
		c := corev1.Container{Name: fmt.Sprintf("i%d", i), Image: pick(b, "a:1", "b:1")}
		if b.bool() {
			c.RestartPolicy = &always
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
		names = append(names, c.Name)
	}
	for i := range b.intn(3) {
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: fmt.Sprintf("e%d", i), Image: "a:1"}})
		names = append(names, fmt.Sprintf("e%d", i))
	}
	names = append(names, "gone")

	status := &noderuntime.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	for i := range b.intn(4) {
		s := sb(fmt.Sprintf("s%d", i), uint32(b.intn(4)), b.intn(3) != 0)
		if b.intn(6) == 0 {
			s.Linux.Namespaces.Options.Network = runtimeapi.NamespaceMode_NODE
		}
		if b.intn(6) == 0 {
			s.Network.Ip = ""
		}
		status.SandboxStatuses = append(status.SandboxStatuses, s)
	}
	states := []noderuntime.ContainerState{noderuntime.ContainerStateRunning, noderuntime.ContainerStateExited,
		noderuntime.ContainerStateCreated, noderuntime.ContainerStateUnknown}
	for i := range b.intn(9) {
		name := names[b.intn(len(names))]
		c := anyCS(pod, name, pick(b, states...), pick(b, 0, 0, 1, 137))
		c.ID.ID = fmt.Sprintf("%s-%d", name, i) // unique, like the runtime's
		if b.intn(5) == 0 {
			c.Hash++ // the spec changed since the container was made
		}
		if b.intn(8) == 0 {
			c.Reason = "OOMKilled"
		}
		if len(status.SandboxStatuses) > 0 {
			c.SandboxID = status.SandboxStatuses[b.intn(len(status.SandboxStatuses))].GetId()
		}
		status.ContainerStatuses = append(status.ContainerStatuses, c)
	}
	fuzzRestartPolicies(b, pod, status)
	return pod, status
}

// fuzzRestartPolicies gives the regular containers and the regular init
// containers their own restartPolicy and restartPolicyRules
// (ContainerRestartRules) from the fuzzer's bytes. It draws last, so that
// the older seeds keep their meaning, and keeps every container status
// whose hash was current current.
func fuzzRestartPolicies(b *fuzzBytes, pod *corev1.Pod, status *noderuntime.PodStatus) {
	before := map[string]uint64{}
	draw := func(c *corev1.Container, policies ...corev1.ContainerRestartPolicy) {
		before[c.Name] = hashContainer(c)
		i := b.intn(len(policies) + 1)
		if i == 0 {
			return // the pod's policy applies
		}
		p := policies[i-1]
		c.RestartPolicy = &p
		for range b.intn(3) {
			op := corev1.ContainerRestartRuleOnExitCodesOpIn
			if b.bool() {
				op = corev1.ContainerRestartRuleOnExitCodesOpNotIn
			}
			rule := corev1.ContainerRestartRule{Action: corev1.ContainerRestartRuleActionRestart,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op}}
			for range 1 + b.intn(3) {
				rule.ExitCodes.Values = append(rule.ExitCodes.Values, pick[int32](b, 0, 1, 137))
			}
			c.RestartPolicyRules = append(c.RestartPolicyRules, rule)
		}
	}
	for i := range pod.Spec.Containers {
		draw(&pod.Spec.Containers[i], corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyOnFailure, corev1.ContainerRestartPolicyNever)
	}
	for i := range pod.Spec.InitContainers {
		if !noderuntime.IsSidecar(&pod.Spec.InitContainers[i]) {
			draw(&pod.Spec.InitContainers[i], corev1.ContainerRestartPolicyOnFailure, corev1.ContainerRestartPolicyNever)
		}
	}
	for _, cs := range status.ContainerStatuses {
		if h, ok := before[cs.Name]; ok && cs.Hash == h {
			cs.Hash = hashContainer(containerSpec(pod, cs.Name))
		}
	}
}

// sandboxUsable reports whether computePodActions has no reason to replace
// the pod's sandbox: exactly one ready sandbox, the newest, in the network
// mode the pod asks for and, off the host network, with an IP.
func sandboxUsable(pod *corev1.Pod, status *noderuntime.PodStatus) bool {
	if len(status.SandboxStatuses) == 0 {
		return false
	}
	ready := 0
	for _, s := range status.SandboxStatuses {
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
	}
	newest := status.SandboxStatuses[0]
	return ready == 1 && newest.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY &&
		newest.GetLinux().GetNamespaces().GetOptions().GetNetwork() == networkMode(pod) &&
		(pod.Spec.HostNetwork || newest.GetNetwork().GetIp() != "")
}

// fuzzProbes answers computePodActions' probe questions from the fuzzer's
// bytes, per container name.
type fuzzProbes struct {
	startup  map[string]noderuntime.StartupResult
	liveness map[string]bool
}

func newFuzzProbes(b *fuzzBytes, pod *corev1.Pod) *fuzzProbes {
	p := &fuzzProbes{startup: map[string]noderuntime.StartupResult{}, liveness: map[string]bool{}}
	results := []noderuntime.StartupResult{noderuntime.StartupSucceeded, noderuntime.StartupSucceeded,
		noderuntime.StartupUnknown, noderuntime.StartupFailed}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			p.startup[c.Name] = pick(b, results...)
			p.liveness[c.Name] = b.intn(4) == 0
		}
	}
	return p
}

func (p *fuzzProbes) startupResult(c *corev1.Container, _ *noderuntime.ContainerStatus) noderuntime.StartupResult {
	return p.startup[c.Name]
}

func (p *fuzzProbes) livenessFailed(c *corev1.Container, _ *noderuntime.ContainerStatus) bool {
	return p.liveness[c.Name]
}

// healthy reports whether no probe gives a reason to kill c.
func (p *fuzzProbes) healthy(c *corev1.Container) bool {
	return p == nil || (p.startup[c.Name] != noderuntime.StartupFailed && !p.liveness[c.Name])
}

// FuzzComputePodActions runs computePodActions over arbitrary pods and
// runtime states, without a prober or with arbitrary probe results. It must
// not panic, every index it returns must be a container of the spec, and
// with a usable sandbox it never kills a running container whose spec did
// not change (its newest status is running with the spec's hash) and whose
// probes did not fail, nor the whole pod while such a regular container
// runs.
func FuzzComputePodActions(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 2, 0, 0})
	f.Add([]byte{2, 1, 0, 3, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 5, 0, 0, 0, 1, 0, 0, 1, 1, 0, 3, 1, 2, 0})
	f.Add([]byte("computePodActions: sidecars, init containers and a stale hash"))
	// Pod restartPolicy Never; c0 exited 137 with its own Never and a rule
	// restarting it on 137 (ContainerRestartRules).
	f.Add([]byte{2, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 3, 1, 1, 3, 1, 0, 0, 2})
	f.Add([]byte("restartPolicyRules: container-level Always, OnFailure and Never under every pod policy, with a prober!"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pod, status := fuzzPodAndStatus(data)
		var probes *fuzzProbes
		var results probeResults // nil: no prober
		if len(data) > 0 && data[len(data)-1]&1 == 1 {
			probes = newFuzzProbes(&fuzzBytes{data: data[len(data)/2:]}, pod)
			results = probes
		}
		a := computePodActions(pod, status, results)
		checkIndexes(t, "ContainersToStart", a.ContainersToStart, len(pod.Spec.Containers))
		checkIndexes(t, "InitContainersToStart", a.InitContainersToStart, len(pod.Spec.InitContainers))
		checkIndexes(t, "EphemeralContainersToStart", a.EphemeralContainersToStart, len(pod.Spec.EphemeralContainers))
		for id, k := range a.ContainersToKill {
			if containerSpec(pod, k.Name) == nil && k.Name != "" {
				t.Errorf("kills %s as %q, which is not a container of the spec", id.ID, k.Name)
			}
		}
		if !sandboxUsable(pod, status) {
			return
		}
		unchangedRegularRuns := false
		check := func(c *corev1.Container, regular bool) {
			cs := status.FindContainerStatusByName(c.Name)
			if cs == nil || cs.State != noderuntime.ContainerStateRunning || cs.Hash != hashContainer(c) || !probes.healthy(c) {
				return
			}
			unchangedRegularRuns = unchangedRegularRuns || regular
			if k, ok := a.ContainersToKill[cs.ID]; ok {
				t.Errorf("kills running container %q whose spec did not change (%s: %s); actions %s", c.Name, k.Reason, k.Message, a)
			}
		}
		for i := range pod.Spec.Containers {
			check(&pod.Spec.Containers[i], true)
		}
		for i := range pod.Spec.InitContainers {
			check(&pod.Spec.InitContainers[i], false)
		}
		if unchangedRegularRuns && a.KillPod {
			t.Errorf("kills the pod while a regular container runs unchanged; actions %s", a)
		}
	})
}

func checkIndexes(t *testing.T, what string, idx []int, n int) {
	t.Helper()
	seen := map[int]bool{}
	for _, i := range idx {
		if i < 0 || i >= n {
			t.Errorf("%s has index %d, want one in [0, %d)", what, i, n)
		}
		if seen[i] {
			t.Errorf("%s has index %d twice: %v", what, i, idx)
		}
		seen[i] = true
	}
}
