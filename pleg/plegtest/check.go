package plegtest

import (
	"maps"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit/pleg"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Ranks order the states a container or sandbox goes through.
const (
	rankAbsent  = 0
	rankCreated = 1
	rankRunning = 2
	rankExited  = 3
)

func containerRank(s noderuntime.ContainerState) int {
	switch s {
	case noderuntime.ContainerStateRunning:
		return rankRunning
	case noderuntime.ContainerStateExited:
		return rankExited
	default:
		return rankCreated
	}
}

func sandboxRank(s *runtimeapi.PodSandboxStatus) int {
	if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
		return rankRunning
	}
	return rankExited
}

// objects returns the rank of every container and sandbox of a status, by
// ID, and the IDs listed more than once.
func objects(s *noderuntime.PodStatus) (ranks map[string]int, dups []string) {
	ranks = map[string]int{}
	add := func(id string, r int) {
		if _, ok := ranks[id]; ok {
			dups = append(dups, id)
		}
		ranks[id] = r
	}
	for _, c := range s.ContainerStatuses {
		add(c.ID.ID, containerRank(c.State))
	}
	for _, sb := range s.SandboxStatuses {
		add(sb.GetId(), sandboxRank(sb))
	}
	return ranks, dups
}

// monitor checks that the statuses the cache hands out never list an
// object twice, never move an object back to an earlier state and never
// bring back an object that was gone.
type monitor struct {
	// highest is the latest rank seen per object.
	highest map[string]int
	// present lists, per pod, the objects its last status showed.
	present map[types.UID]map[string]bool
	// gone holds the objects that disappeared.
	gone map[string]bool
}

func newMonitor() *monitor {
	return &monitor{highest: map[string]int{}, present: map[types.UID]map[string]bool{}, gone: map[string]bool{}}
}

// check records one status of pod uid and returns what is wrong with it.
func (m *monitor) check(uid types.UID, s *noderuntime.PodStatus) []string {
	var bad []string
	ranks, dups := objects(s)
	for _, id := range dups {
		bad = append(bad, "the status of pod "+string(uid)+" lists "+id+" twice")
	}
	for id, r := range ranks {
		if m.gone[id] {
			bad = append(bad, "object "+id+" of pod "+string(uid)+" came back after it was gone")
		}
		if r < m.highest[id] {
			bad = append(bad, "object "+id+" of pod "+string(uid)+" went back in time")
		}
		m.highest[id] = max(m.highest[id], r)
	}
	for id := range m.present[uid] {
		if _, ok := ranks[id]; !ok {
			m.gone[id] = true
		}
	}
	now := map[string]bool{}
	for id := range ranks {
		now[id] = true
	}
	m.present[uid] = now
	return bad
}

// clone returns a copy of what m has seen so far.
func (m *monitor) clone() *monitor {
	c := newMonitor()
	maps.Copy(c.highest, m.highest)
	maps.Copy(c.gone, m.gone)
	for uid, ids := range m.present {
		c.present[uid] = maps.Clone(ids)
	}
	return c
}

// note raises the ranks m has seen to those s shows, without judging s: it
// is for a status already checked against an earlier view.
func (m *monitor) note(s *noderuntime.PodStatus) {
	ranks, _ := objects(s)
	for id, r := range ranks {
		m.highest[id] = max(m.highest[id], r)
	}
}

// seen reports whether an object was ever shown.
func (m *monitor) seen(id string) bool { _, ok := m.highest[id]; return ok }

// poll receives the events waiting, checks that the cache held each
// event's change when it was received, and checks the cache's status of
// every pod of the case.
func (h *harness) poll() {
	h.tb.Helper()
	for {
		select {
		case ev := <-h.plg.Watch():
			h.checkEvent(ev)
			h.events = append(h.events, *ev)
			continue
		default:
		}
		break
	}
	for _, p := range h.pods {
		s, err := h.cache.Get(p.UID)
		if err != nil {
			continue // a failed inspection holds no status
		}
		for _, msg := range h.mon.check(p.UID, s) {
			h.tb.Errorf("cache: %s", msg)
		}
	}
}

// checkEvent fails the case when the cache does not show an event's change
// (or a later state) as the event is received.
func (h *harness) checkEvent(ev *pleg.Event) {
	h.tb.Helper()
	s, err := h.cache.Get(ev.ID)
	if err != nil || ev.Data == "" {
		return
	}
	ranks, _ := objects(s)
	r, present := ranks[ev.Data]
	switch ev.Type {
	case pleg.ContainerStarted:
		if (present && r < rankRunning) || (!present && !h.mon.seen(ev.Data)) {
			h.tb.Errorf("event %s %s of pod %s came before the cache showed it running (rank %d)", ev.Type, ev.Data, ev.ID, r)
		}
	case pleg.ContainerDied:
		if present && r < rankExited {
			h.tb.Errorf("event %s %s of pod %s came before the cache showed it exited (rank %d)", ev.Type, ev.Data, ev.ID, r)
		}
	case pleg.ContainerRemoved:
		if present {
			h.tb.Errorf("event %s %s of pod %s came while the cache still showed it", ev.Type, ev.Data, ev.ID)
		}
	}
}

// mark returns the number of events received so far.
func (h *harness) mark() int {
	h.poll()
	return len(h.events)
}

// waitEvent waits for an event about pod uid received after mark: of type
// typ about id with Options.KubeletEvents, any event naming the pod
// otherwise.
func (h *harness) waitEvent(what string, mark int, uid types.UID, typ pleg.EventType, id string) {
	h.tb.Helper()
	h.d.until(what, h.opts.Within, func() bool {
		h.poll()
		for _, ev := range h.events[mark:] {
			if ev.ID == uid && (!h.opts.KubeletEvents || (ev.Type == typ && ev.Data == id)) {
				return true
			}
		}
		return false
	})
}

// waitStatus waits until the cache's status of pod uid satisfies cond.
func (h *harness) waitStatus(what string, uid types.UID, cond func(*noderuntime.PodStatus) bool) {
	h.tb.Helper()
	h.d.until(what, h.opts.Within, func() bool {
		h.poll()
		s, err := h.cache.Get(uid)
		return err == nil && cond(s)
	})
}

// noDuplicateEvents fails the case when, with Options.KubeletEvents, an
// event was sent twice for the same object.
func (h *harness) noDuplicateEvents() {
	h.tb.Helper()
	if !h.opts.KubeletEvents {
		return
	}
	seen := map[pleg.Event]bool{}
	for _, ev := range h.events {
		if ev.Type == pleg.PodSync {
			continue
		}
		if seen[ev] {
			h.tb.Errorf("event %s %s of pod %s was sent twice", ev.Type, ev.Data, ev.ID)
		}
		seen[ev] = true
	}
}

// rankOf returns the rank of object id in the status (rankAbsent when it
// is not there).
func rankOf(s *noderuntime.PodStatus, id string) int {
	ranks, _ := objects(s)
	return ranks[id]
}
