package plegtest

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// caseLifecycle walks one pod through its life, making each change from
// outside the agent, and waits for each change's event and status.
func caseLifecycle(h *harness) {
	p := h.newPod("life", ctrSpec{name: "main"})
	m := h.mark()
	sb, ids := h.start(p)
	c := ids["main"]
	h.waitEvent("the container's start", m, p.UID, pleg.ContainerStarted, c)
	h.waitEvent("the sandbox's start", m, p.UID, pleg.ContainerStarted, sb)
	h.waitStatus("the cache to show the pod running", p.UID, func(s *noderuntime.PodStatus) bool {
		return rankOf(s, c) == rankRunning && rankOf(s, sb) == rankRunning
	})

	m = h.mark()
	h.cri("stop the container from outside", func(ctx context.Context) error { return h.out.StopContainer(ctx, c, 0) })
	h.waitEvent("the death of a container stopped from outside", m, p.UID, pleg.ContainerDied, c)
	h.waitStatus("the cache to show the container exited", p.UID, func(s *noderuntime.PodStatus) bool {
		return rankOf(s, c) == rankExited
	})

	m = h.mark()
	h.cri("remove the container", func(ctx context.Context) error { return h.out.RemoveContainer(ctx, c) })
	h.waitEvent("the removal of the container", m, p.UID, pleg.ContainerRemoved, c)
	h.waitStatus("the cache to drop the container", p.UID, func(s *noderuntime.PodStatus) bool {
		return rankOf(s, c) == rankAbsent
	})

	m = h.mark()
	h.cri("stop the sandbox", func(ctx context.Context) error { return h.out.StopPodSandbox(ctx, sb) })
	h.cri("remove the sandbox", func(ctx context.Context) error { return h.out.RemovePodSandbox(ctx, sb) })
	h.waitEvent("the removal of the sandbox", m, p.UID, pleg.ContainerRemoved, sb)
	h.waitStatus("the cache to forget the pod", p.UID, func(s *noderuntime.PodStatus) bool {
		return len(s.SandboxStatuses) == 0 && len(s.ContainerStatuses) == 0
	})
	h.noDuplicateEvents()
}

// caseManyExits starts several pods whose containers exit at known times
// with known codes, and waits for every death.
func caseManyExits(h *harness) {
	type job struct {
		uid  types.UID
		id   string
		code int
	}
	var jobs []job
	m := h.mark()
	for i := range 4 {
		code := 10 + i
		p := h.newPod(fmt.Sprintf("exit%d", i), ctrSpec{name: "job", exitAfter: time.Second + time.Duration(i)*300*time.Millisecond, exitCode: code})
		_, ids := h.start(p)
		jobs = append(jobs, job{uid: p.UID, id: ids["job"], code: code})
	}
	for _, j := range jobs {
		h.waitEvent("the death of container "+j.id, m, j.uid, pleg.ContainerDied, j.id)
		h.waitStatus("the cache to show the exit code of "+j.id, j.uid, func(s *noderuntime.PodStatus) bool {
			for _, c := range s.ContainerStatuses {
				if c.ID.ID == j.id {
					return c.State == noderuntime.ContainerStateExited && c.ExitCode == j.code
				}
			}
			return false
		})
	}
	h.noDuplicateEvents()
}

// caseWorker is a pod worker: it syncs a crashing pod each time the cache
// has a status newer than its previous sync, until the container was
// restarted three times. Each status must show everything the runtime did
// before that sync ended (the cache did not vouch for a time too early),
// and the runtime must never hold two live copies of the container.
func caseWorker(h *harness) {
	p := h.newPod("worker", ctrSpec{name: "crash", exitAfter: time.Second, exitCode: 3})
	start := h.clk.Now()
	var lastSync time.Time
	var truth *noderuntime.PodStatus
	for {
		s := h.getNewerThan("a status newer than the last sync", p.UID, lastSync)
		if truth != nil {
			want, _ := objects(truth)
			for id, r := range want {
				if got := rankOf(s, id); got < r {
					h.tb.Fatalf("the status newer than the sync that ended at %v shows %s at rank %d; the runtime had it at rank %d before then",
						lastSync, id, got, r)
				}
			}
		}
		h.sync(p, s)
		truth = h.truth(p)
		lastSync = h.clk.Now()
		live, all := 0, 0
		for _, c := range truth.ContainerStatuses {
			all++
			if c.State != noderuntime.ContainerStateExited {
				live++
			}
		}
		if live > 1 {
			h.tb.Fatalf("the runtime holds %d live copies of the container: a sync acted on a stale status", live)
		}
		if all >= 4 {
			return
		}
		if h.clk.Since(start) > 2*time.Minute {
			h.tb.Fatalf("the container was restarted %d times in %v, want 3", all-1, h.clk.Since(start))
		}
	}
}

// caseIdleWaiter waits for a status newer than now, for a running pod that
// does not change and for a pod the runtime does not know.
func caseIdleWaiter(h *harness) {
	p := h.newPod("idle", ctrSpec{name: "main"})
	_, ids := h.start(p)
	h.waitStatus("the cache to show the pod running", p.UID, func(s *noderuntime.PodStatus) bool {
		return rankOf(s, ids["main"]) == rankRunning
	})
	h.d.pass(100 * time.Millisecond)
	since := h.clk.Now()
	s := h.getNewerThan("a status of an idle pod newer than now", p.UID, since)
	if rankOf(s, ids["main"]) != rankRunning {
		h.tb.Errorf("the idle pod's newer status does not show its container running: %+v", s)
	}
	s = h.getNewerThan("a status of an unknown pod newer than now", types.UID(h.id+"-unknown"), since)
	if len(s.SandboxStatuses) != 0 || len(s.ContainerStatuses) != 0 {
		h.tb.Errorf("an unknown pod's status is not empty: %+v", s)
	}
}

// cri makes one call to the runtime and fails the case on error.
func (h *harness) cri(what string, call func(ctx context.Context) error) {
	h.tb.Helper()
	ctx, cancel := h.ctx()
	defer cancel()
	if err := call(ctx); err != nil {
		h.tb.Fatalf("%s: %v", what, err)
	}
	h.d.settle()
}

// getNewerThan calls the cache's GetNewerThan as a pod worker does and
// fails the case when it is not woken within Options.Within.
func (h *harness) getNewerThan(what string, uid types.UID, minTime time.Time) *noderuntime.PodStatus {
	h.tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		s   *noderuntime.PodStatus
		err error
	}
	// The answer is judged against what the suite had seen when it asked:
	// the polls below may see a later status before the answer is read,
	// and an answer that was right when the cache gave it is not a
	// regression.
	before := h.mon.clone()
	ch := make(chan result, 1)
	go func() {
		s, err := h.cache.GetNewerThan(ctx, uid, minTime)
		ch <- result{s, err}
	}()
	var r result
	got := false
	h.d.until(what, h.opts.Within, func() bool {
		h.poll()
		select {
		case r = <-ch:
			got = true
		default:
		}
		return got
	})
	if r.err != nil {
		h.tb.Fatalf("%s: %v", what, r.err)
	}
	for _, msg := range before.check(uid, r.s) {
		h.tb.Errorf("cache: %s", msg)
	}
	h.mon.note(r.s)
	return r.s
}

// caseFutureStamp: a status stamped in the future (a writer whose clock
// runs an hour ahead, such as an evented PLEG taking a skewed runtime's
// event times) must not freeze the pod's entry: the cache bounds every
// stamp by its own now, so the next inspection still replaces the entry
// and a worker waiting for a status newer than now gets the new one, not
// the future-stamped one.
func caseFutureStamp(h *harness) {
	p := h.newPod("future", ctrSpec{name: "main"})
	_, ids := h.start(p)
	c := ids["main"]
	h.waitStatus("the cache to show the pod running", p.UID, func(s *noderuntime.PodStatus) bool {
		return rankOf(s, c) == rankRunning
	})
	s, err := h.cache.Get(p.UID)
	if err != nil {
		h.tb.Fatalf("the cache holds an error for the running pod: %v", err)
	}
	h.cache.Set(p.UID, s, nil, h.clk.Now().Add(time.Hour))
	h.d.pass(100 * time.Millisecond)

	m := h.mark()
	h.cri("stop the container from outside", func(ctx context.Context) error { return h.out.StopContainer(ctx, c, 0) })
	h.waitEvent("the death of the container after a status stamped in the future", m, p.UID, pleg.ContainerDied, c)
	h.waitStatus("the cache to show the container exited after a status stamped an hour ahead", p.UID, func(s *noderuntime.PodStatus) bool {
		return rankOf(s, c) == rankExited
	})
	since := h.clk.Now()
	s = h.getNewerThan("a status newer than now after one stamped in the future", p.UID, since)
	if rankOf(s, c) != rankExited {
		h.tb.Errorf("the status newer than %v shows the stopped container at rank %d: the status stamped in the future was taken as newer", since, rankOf(s, c))
	}
}
