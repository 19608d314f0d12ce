package runtimetest

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// caseIdentity: Type, Version and Status answer; an unknown pod has an
// empty status and killing it is a no-op.
func caseIdentity(h *harness) {
	if h.rt.Type() == "" {
		h.failf("Type() is empty")
	}
	type version struct {
		v   *noderuntime.VersionInfo
		err error
	}
	v := call(h, "Version", func(ctx context.Context) version { v, err := h.rt.Version(ctx); return version{v, err} })
	if v.err != nil || v.v == nil || v.v.RuntimeName == "" || v.v.RuntimeVersion == "" {
		h.failf("Version() = %+v, %v; want a runtime name and version", v.v, v.err)
	}
	type res struct {
		s   *noderuntime.RuntimeStatus
		err error
	}
	st := call(h, "Status", func(ctx context.Context) res { s, err := h.rt.Status(ctx); return res{s, err} })
	if st.err != nil || st.s == nil || !st.s.Ready || !st.s.NetworkReady {
		h.failf("Status() = %+v, %v; want ready with its network ready", st.s, st.err)
	}
	p := h.newPod("unknown", corev1.RestartPolicyAlways)
	s := h.status(p)
	if len(s.SandboxStatuses) != 0 || len(s.ContainerStatuses) != 0 {
		h.failf("GetPodStatus of a pod the runtime never saw is not empty: %d sandboxes, %d containers", len(s.SandboxStatuses), len(s.ContainerStatuses))
	}
	h.kill(nil, &noderuntime.Pod{ID: p.UID, Name: p.Name, Namespace: p.Namespace}, "a pod the runtime never saw")
}

// caseRun: SyncPod runs a two-container pod; the status and the listing
// show it; a second SyncPod with the new status changes nothing.
func caseRun(h *harness) {
	p := h.newPod("run", corev1.RestartPolicyAlways, ctr{name: "main"}, ctr{name: "side"})
	h.sync(p)
	var s *noderuntime.PodStatus
	h.until("both containers running", within, func() bool {
		s = h.status(p)
		return running(s, "main", "side")
	})
	if s.ID != p.UID || s.Name != p.Name || s.Namespace != p.Namespace {
		h.failf("status names pod %s %s/%s, want %s %s/%s", s.ID, s.Namespace, s.Name, p.UID, p.Namespace, p.Name)
	}
	if len(s.SandboxStatuses) != 1 || readySandboxes(s) != 1 {
		h.failf("the pod has %d sandboxes (%d ready), want one ready", len(s.SandboxStatuses), readySandboxes(s))
	}
	for _, c := range s.ContainerStatuses {
		if c.ID.Type != h.rt.Type() || c.ID.ID == "" {
			h.failf("container %s has ID %q, want %s://<id>", c.Name, c.ID, h.rt.Type())
		}
		if c.StartedAt.IsZero() || !c.FinishedAt.IsZero() {
			h.failf("running container %s has StartedAt %v FinishedAt %v, want a start and no finish", c.Name, c.StartedAt, c.FinishedAt)
		}
		if c.Image == "" {
			h.failf("container %s has no image", c.Name)
		}
	}
	if len(s.ContainerStatuses) != 2 {
		h.failf("the pod has %d containers, want 2", len(s.ContainerStatuses))
	}
	ids := containerIDs(s)

	lp := h.listed(p.UID, false)
	if lp == nil {
		h.failf("GetPods(all=false) does not list the running pod")
	}
	if lp.Name != p.Name || lp.Namespace != p.Namespace || len(lp.Containers) != 2 || !lp.IsRunning() {
		h.failf("GetPods lists the pod as %s/%s with %d containers (running %v), want %s/%s with 2 running",
			lp.Namespace, lp.Name, len(lp.Containers), lp.IsRunning(), p.Namespace, p.Name)
	}
	lp.Containers, lp.Name = nil, "changed-by-the-caller"
	if again := h.listed(p.UID, false); again == nil || again.Name != p.Name || len(again.Containers) != 2 {
		h.failf("changing a pod GetPods returned changed the runtime's next listing: the caller must own the objects")
	}

	h.sync(p)
	h.until("the pod still running after a second sync", within, func() bool { s = h.status(p); return running(s, "main", "side") })
	if got := containerIDs(s); !slices.Equal(got, ids) || len(s.SandboxStatuses) != 1 {
		h.failf("a second SyncPod of an unchanged running pod changed it: containers %v (were %v), %d sandboxes", got, ids, len(s.SandboxStatuses))
	}
}

// caseExitCodes: a Never pod's containers exit 0 and 3; both codes and
// finish times are reported and a later sync restarts neither.
func caseExitCodes(h *harness) {
	p := h.newPod("exits", corev1.RestartPolicyNever,
		ctr{name: "ok", exitAfter: time.Second, exitCode: 0}, ctr{name: "bad", exitAfter: 1500 * time.Millisecond, exitCode: 3})
	h.sync(p)
	var s *noderuntime.PodStatus
	h.until("both containers exited", within, func() bool {
		s = h.status(p)
		for _, n := range []string{"ok", "bad"} {
			if c := s.FindContainerStatusByName(n); c == nil || c.State != noderuntime.ContainerStateExited {
				return false
			}
		}
		return true
	})
	for name, code := range map[string]int{"ok": 0, "bad": 3} {
		c := s.FindContainerStatusByName(name)
		if c.ExitCode != code {
			h.failf("container %s exited with code %d, the runtime reports %d", name, code, c.ExitCode)
		}
		if c.StartedAt.IsZero() || c.FinishedAt.Before(c.StartedAt) {
			h.failf("exited container %s has StartedAt %v FinishedAt %v, want a finish after the start", name, c.StartedAt, c.FinishedAt)
		}
	}
	h.sync(p)
	h.settle()
	if s = h.status(p); len(s.ContainerStatuses) != 2 {
		h.failf("a sync after the exits of a restartPolicy Never pod left %d containers, want the 2 exited ones", len(s.ContainerStatuses))
	}
}

// caseRestart: a crashing container of an Always pod is restarted in the
// same sandbox with RestartCount 1; the exited copy stays listed.
func caseRestart(h *harness) {
	p := h.newPod("restart", corev1.RestartPolicyAlways, ctr{name: "crash", exitAfter: time.Second, exitCode: 1})
	h.sync(p)
	var s *noderuntime.PodStatus
	h.until("the container running", within, func() bool { s = h.status(p); return running(s, "crash") })
	first := s.FindContainerStatusByName("crash").ID
	sandbox := s.SandboxStatuses[0].GetId()
	h.until("the container exited", within, func() bool {
		s = h.status(p)
		c := s.FindContainerStatusByName("crash")
		return c != nil && c.State == noderuntime.ContainerStateExited
	})
	h.until("a second copy of the container running", within, func() bool {
		h.sync(p)
		s = h.status(p)
		return len(byName(s, "crash")) >= 2 && running(s, "crash")
	})
	copies := byName(s, "crash")
	newest := s.FindContainerStatusByName("crash")
	if newest.ID == first {
		h.failf("the newest copy of the container is the first one (%s); ContainerStatuses must be newest first", first)
	}
	if newest.RestartCount != 1 {
		h.failf("the restarted container has RestartCount %d, want 1", newest.RestartCount)
	}
	var old *noderuntime.ContainerStatus
	for _, c := range copies {
		if c.ID == first {
			old = c
		}
	}
	if old == nil || old.State != noderuntime.ContainerStateExited || old.ExitCode != 1 {
		h.failf("the exited copy is not listed with its exit code 1 after the restart: %+v", old)
	}
	if len(s.SandboxStatuses) != 1 || s.SandboxStatuses[0].GetId() != sandbox || readySandboxes(s) != 1 {
		h.failf("the restart did not happen in the pod's ready sandbox %s: %d sandboxes", sandbox, len(s.SandboxStatuses))
	}
}

// caseSpecChange: a container whose spec changed is replaced.
func caseSpecChange(h *harness) {
	p := h.newPod("change", corev1.RestartPolicyAlways, ctr{name: "main"})
	h.sync(p)
	var s *noderuntime.PodStatus
	h.until("the container running", within, func() bool { s = h.status(p); return running(s, "main") })
	first := s.FindContainerStatusByName("main").ID
	h.tick() // the replacement is created after the first container, not at the same instant
	p.Spec.Containers[0].Command = []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3601 & wait"}
	h.until("a new container running for the changed spec", within, func() bool {
		h.sync(p)
		s = h.status(p)
		c := s.FindContainerStatusByName("main")
		return c != nil && c.ID != first && c.State == noderuntime.ContainerStateRunning
	})
	for _, c := range byName(s, "main") {
		if c.ID == first && c.State == noderuntime.ContainerStateRunning {
			h.failf("the container of the old spec %s still runs beside its replacement", first)
		}
	}
}

// caseKill: KillPod stops everything; GetPods lists the pod with all only;
// a second kill, and a kill by the runtime's own listing, succeed.
func caseKill(h *harness) {
	p := h.newPod("kill", corev1.RestartPolicyAlways, ctr{name: "main"}, ctr{name: "side"})
	h.sync(p)
	var s *noderuntime.PodStatus
	h.until("both containers running", within, func() bool { s = h.status(p); return running(s, "main", "side") })
	h.kill(p, s.ToPod(), "a running pod")
	s = h.status(p)
	if live := s.GetRunningContainerStatuses(); len(live) > 0 || readySandboxes(s) > 0 {
		h.failf("after KillPod %d containers run and %d sandboxes are ready, want none", len(live), readySandboxes(s))
	}
	if lp := h.listed(p.UID, false); lp != nil && lp.IsRunning() {
		h.failf("GetPods(all=false) lists the killed pod as running")
	}
	lp := h.listed(p.UID, true)
	if lp == nil || len(lp.Sandboxes) == 0 {
		h.failf("GetPods(all=true) does not list the killed pod and its sandbox, whose objects remain until garbage collection")
	}
	h.kill(p, s.ToPod(), "a second kill")
	h.kill(nil, lp, "a kill of the runtime's own listing with no spec")
}

// caseGC: garbage collection removes every object of a removed pod and
// leaves a running pod alone.
func caseGC(h *harness) {
	gone := h.newPod("gone", corev1.RestartPolicyAlways, ctr{name: "main"})
	kept := h.newPod("kept", corev1.RestartPolicyAlways, ctr{name: "main"})
	h.sync(gone)
	h.sync(kept)
	h.until("both pods running", within, func() bool { return running(h.status(gone), "main") && running(h.status(kept), "main") })
	h.kill(gone, h.status(gone).ToPod(), "the pod to remove")
	gc := h.rt.(noderuntime.GarbageCollector)
	if err := call(h, "GarbageCollect", func(ctx context.Context) error {
		return gc.GarbageCollect(ctx, func(uid types.UID) bool { return uid == gone.UID })
	}); err != nil {
		h.failf("GarbageCollect: %v", err)
	}
	if s := h.status(gone); len(s.SandboxStatuses) != 0 || len(s.ContainerStatuses) != 0 {
		h.failf("after garbage collection the removed pod still has %d sandboxes and %d containers", len(s.SandboxStatuses), len(s.ContainerStatuses))
	}
	if h.listed(gone.UID, true) != nil {
		h.failf("GetPods(all=true) still lists the garbage-collected pod")
	}
	if !running(h.status(kept), "main") || h.listed(kept.UID, false) == nil {
		h.failf("garbage collection of another pod stopped or unlisted the running pod")
	}
}

// containerIDs returns the IDs of the status's containers, sorted.
func containerIDs(s *noderuntime.PodStatus) []string {
	var out []string
	for _, c := range s.ContainerStatuses {
		out = append(out, c.ID.String())
	}
	slices.Sort(out)
	return out
}
