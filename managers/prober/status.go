package prober

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podRecord is what a worker needs from the pod's latest API status, as
// UpdatePodStatus last saw it. A stored record is never modified.
type podRecord struct {
	phase    corev1.PodPhase
	podIP    string
	deleting bool
	// containers holds the regular containers first, then the init
	// containers, as the kubelet's workers look them up.
	containers []containerRecord
}

// containerRecord is one container of a podRecord.
type containerRecord struct {
	name       string
	id         string
	running    bool
	startedAt  time.Time
	terminated bool
	exitCode   int32 // of the terminated container
	// carriedStarted is the Started the agent passed in, before the Prober
	// set it: it is trusted only for adopted containers.
	carriedStarted bool
}

// container returns the newest record of the named container.
func (r *podRecord) container(name string) (containerRecord, bool) {
	for _, c := range r.containers {
		if c.name == name && c.id != "" {
			return c, true
		}
	}
	return containerRecord{}, false
}

// UpdatePodStatus sets Started and Ready in status, then records it for the
// workers of the pod.
func (p *Prober) UpdatePodStatus(pod *corev1.Pod, status *corev1.PodStatus) {
	rec := &podRecord{
		phase:    status.Phase,
		podIP:    status.PodIP,
		deleting: pod.DeletionTimestamp != nil,
	}
	for _, list := range [][]corev1.ContainerStatus{status.ContainerStatuses, status.InitContainerStatuses} {
		for i := range list {
			rec.containers = append(rec.containers, newContainerRecord(&list[i]))
		}
	}
	podReady := hasReadyCondition(pod)
	for i := range status.ContainerStatuses {
		p.setStartedReady(pod.UID, &status.ContainerStatuses[i], &rec.containers[i], podReady)
	}
	n := len(status.ContainerStatuses)
	for i := range status.InitContainerStatuses {
		s := &status.InitContainerStatuses[i]
		if c := findContainer(pod, s.Name); c != nil && isSidecar(c) {
			p.setStartedReady(pod.UID, s, &rec.containers[n+i], podReady)
			continue
		}
		started := p.started(pod.UID, &rec.containers[n+i])
		s.Started = &started
		s.Ready = s.State.Terminated != nil && s.State.Terminated.ExitCode == 0
	}

	p.mu.Lock()
	if p.probed[pod.UID] > 0 {
		p.statuses[pod.UID] = rec
	}
	p.mu.Unlock()
}

// setStartedReady sets Started and Ready of a regular or sidecar container.
func (p *Prober) setStartedReady(uid types.UID, s *corev1.ContainerStatus, c *containerRecord, podReady bool) {
	started := p.started(uid, c)
	s.Started = &started
	s.Ready = started && p.ready(uid, c, podReady)
}

// started reports whether a container has started: it runs and its startup
// probe succeeded, or it has none. An adopted container keeps the Started
// the agent carried over until its startup probe reports.
func (p *Prober) started(uid types.UID, c *containerRecord) bool {
	if !c.running {
		return false
	}
	if r, ok := p.startup.Get(c.id); ok {
		return r == Success
	}
	if p.adopted(c) && c.carriedStarted {
		return true
	}
	return !p.hasWorker(uid, c.name, Startup)
}

// ready reports whether a started container is ready: it runs and its
// readiness probe succeeded, or it has none. A container waiting for its
// first success gets its readiness probe run at once. An adopted container
// whose probe has not reported yet is ready when the pod was.
func (p *Prober) ready(uid types.UID, c *containerRecord, podReady bool) bool {
	if !c.running {
		return false
	}
	r, ok := p.readiness.Get(c.id)
	if ok && r == Success {
		return true
	}
	w, exists := p.getWorker(uid, c.name, Readiness)
	if !exists {
		return true
	}
	w.trigger()
	return !ok && p.adopted(c) && podReady
}

// adopted reports whether the container was already running well before the
// Prober was created: the agent restarted and found it.
func (p *Prober) adopted(c *containerRecord) bool {
	return c.running && !c.startedAt.IsZero() &&
		c.startedAt.Before(p.start.Add(-p.cfg.RestartGracePeriod))
}

func newContainerRecord(s *corev1.ContainerStatus) containerRecord {
	c := containerRecord{
		name:           s.Name,
		id:             s.ContainerID,
		terminated:     s.State.Terminated != nil,
		carriedStarted: s.Started != nil && *s.Started,
	}
	if t := s.State.Terminated; t != nil {
		c.exitCode = t.ExitCode
	}
	if r := s.State.Running; r != nil {
		c.running = true
		c.startedAt = r.StartedAt.Time
	}
	return c
}

func hasReadyCondition(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
