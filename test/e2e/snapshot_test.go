//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// podObjects is what the runtime holds of one pod: its sandboxes and
// containers, by ID, with their states and attempts.
type podObjects struct {
	Sandboxes  []string // "id state"
	Containers []string // "name id attempt state"
}

// runtimeSnapshot maps each pod (by sandbox name) of the agent's instance
// to what the runtime holds of it.
type runtimeSnapshot map[string]*podObjects

// snapshot reads what the runtime holds of instance's pods.
func snapshot(t *testing.T, rs criapi.RuntimeService, instance string) runtimeSnapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sel := map[string]string{noderuntime.LabelInstance: instance}
	sbs, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		t.Fatalf("list sandboxes: %v", err)
	}
	cs, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	out := runtimeSnapshot{}
	pod := map[string]*podObjects{} // by sandbox ID
	for _, sb := range sbs {
		p := out[sb.Metadata.Name]
		if p == nil {
			p = &podObjects{}
			out[sb.Metadata.Name] = p
		}
		p.Sandboxes = append(p.Sandboxes, fmt.Sprintf("%s %s", sb.Id, sb.State))
		pod[sb.Id] = p
	}
	for _, c := range cs {
		p := pod[c.PodSandboxId]
		if p == nil {
			t.Errorf("container %s (%s) has no sandbox of this instance", c.Id, c.Metadata.Name)
			continue
		}
		p.Containers = append(p.Containers, fmt.Sprintf("%s %s attempt=%d %s", c.Metadata.Name, c.Id, c.Metadata.Attempt, c.State))
	}
	for _, p := range out {
		sort.Strings(p.Sandboxes)
		sort.Strings(p.Containers)
	}
	return out
}

func (s runtimeSnapshot) String() string {
	var names []string
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s: sandboxes %v containers %v; ", n, s[n].Sandboxes, s[n].Containers)
	}
	return b.String()
}

// healthy reports why s is not wants pods, each with one ready sandbox and
// one running container per name, first attempt; "" when it is.
func (s runtimeSnapshot) unhealthy(wants int) string {
	if len(s) != wants {
		return fmt.Sprintf("%d pods, want %d", len(s), wants)
	}
	for n, p := range s {
		if len(p.Sandboxes) != 1 || !strings.HasSuffix(p.Sandboxes[0], runtimeapi.PodSandboxState_SANDBOX_READY.String()) {
			return fmt.Sprintf("pod %s: sandboxes %v, want one ready", n, p.Sandboxes)
		}
		if len(p.Containers) != 1 || !strings.HasSuffix(p.Containers[0], "attempt=0 "+runtimeapi.ContainerState_CONTAINER_RUNNING.String()) {
			return fmt.Sprintf("pod %s: containers %v, want one running, first attempt", n, p.Containers)
		}
	}
	return ""
}

// survivors fails the test unless every pod of now has one ready sandbox
// and one running container, and everything that ran in atKill still runs
// in now: a container that was only created when the agent died may have
// been replaced by a new attempt (as the kubelet replaces it), none that ran
// was restarted or duplicated.
func survivors(t *testing.T, atKill, now runtimeSnapshot, wants int) {
	t.Helper()
	if len(now) != wants {
		t.Fatalf("%d pods, want %d: %s", len(now), wants, now)
	}
	for name, p := range now {
		// A sandbox the dead agent was still creating is not ready (the
		// runtime stops it when the call is cut): the agent replaces it, as
		// the kubelet does, and container GC removes it later.
		if l := now.live()[name]; len(l.Sandboxes) != 1 || len(l.Containers) != 1 {
			t.Fatalf("pod %s: sandboxes %v, containers %v: want one ready sandbox and one running container", name, p.Sandboxes, p.Containers)
		}
		old := atKill[name]
		if old == nil {
			continue
		}
		for _, sb := range old.Sandboxes {
			if !slices.Contains(p.Sandboxes, sb) && strings.HasSuffix(sb, runtimeapi.PodSandboxState_SANDBOX_READY.String()) {
				t.Fatalf("pod %s: sandbox %s ready at the kill is gone: %v", name, sb, p.Sandboxes)
			}
		}
		for _, c := range old.Containers {
			if strings.HasSuffix(c, runtimeapi.ContainerState_CONTAINER_RUNNING.String()) && !slices.Contains(p.Containers, c) {
				t.Fatalf("pod %s: container %s running at the kill does not run now: %v", name, c, p.Containers)
			}
		}
	}
}

// live returns the ready sandboxes and running containers of s: dead ones
// may be garbage collected at any time.
func (s runtimeSnapshot) live() runtimeSnapshot {
	out := runtimeSnapshot{}
	for name, p := range s {
		l := &podObjects{}
		for _, sb := range p.Sandboxes {
			if strings.HasSuffix(sb, runtimeapi.PodSandboxState_SANDBOX_READY.String()) {
				l.Sandboxes = append(l.Sandboxes, sb)
			}
		}
		for _, c := range p.Containers {
			if strings.HasSuffix(c, runtimeapi.ContainerState_CONTAINER_RUNNING.String()) {
				l.Containers = append(l.Containers, c)
			}
		}
		out[name] = l
	}
	return out
}

// intact fails the test unless now runs exactly what before ran: no ready
// sandbox or running container lost, added (duplicated) or restarted.
func intact(t *testing.T, what string, before, now runtimeSnapshot) {
	t.Helper()
	if b, n := before.live().String(), now.live().String(); b != n {
		t.Fatalf("%s: the runtime changed:\nbefore: %s\nnow:    %s", what, b, n)
	}
}

// stays checks for d that the runtime keeps holding exactly before and the
// agent shows every pod running with the restart count it had (in
// restarts, by pod name; none when nil): time for a wrong decision (a kill,
// a duplicate, a restart) to show.
func stays(t *testing.T, h *agentHarness, rs criapi.RuntimeService, d time.Duration, before runtimeSnapshot, restarts map[string]int32) {
	t.Helper()
	for start := time.Now(); time.Since(start) < d; time.Sleep(250 * time.Millisecond) {
		intact(t, "while the agent runs on", before, snapshot(t, rs, h.node))
	}
	got := h.restartCounts()
	if len(got) != len(before) {
		t.Fatalf("/pods shows %d running pods (%v), want %d", len(got), got, len(before))
	}
	for name, n := range got {
		if n != restarts[name] {
			t.Fatalf("/pods shows %s with %d restarts, want %d", name, n, restarts[name])
		}
	}
}

// restartCounts returns the restart count of each running pod in /pods.
func (h *agentHarness) restartCounts() map[string]int32 {
	h.t.Helper()
	pods, err := h.pods()
	if err != nil {
		h.t.Fatalf("/pods: %v", err)
	}
	out := map[string]int32{}
	for i := range pods {
		if p := &pods[i]; runningMain(p) {
			out[p.Name] = p.Status.ContainerStatuses[0].RestartCount
		}
	}
	return out
}

// allRunning waits until /pods shows names (static pods, without the node
// suffix) running.
func allRunning(h *agentHarness, names []string, timeout time.Duration) {
	h.t.Helper()
	for _, n := range names {
		h.waitPod(n, timeout, "the container to run", func(p *corev1.Pod) bool { return runningMain(p) })
	}
}

// writeSleepers writes n sleeper manifests and returns their pod names.
func writeSleepers(h *agentHarness, prefix string, n int) []string {
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		h.writeManifest(name+".yaml", sleeperPod(h.env.Image, name))
		names = append(names, name)
	}
	return names
}
