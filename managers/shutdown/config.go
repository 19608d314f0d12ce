package shutdown

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Config is the graceful node shutdown policy in the kubelet's terms. The
// zero value turns graceful shutdown off, as the kubelet's defaults.
type Config struct {
	// GracePeriod is how long the node delays its shutdown for the pods
	// (--shutdown-grace-period); 0 turns graceful shutdown off. Defaults
	// to 0.
	GracePeriod time.Duration `json:"gracePeriod,omitempty"`
	// GracePeriodCriticalPods is the part of GracePeriod kept for the
	// critical pods, which are terminated after the others
	// (--shutdown-grace-period-critical-pods); at most GracePeriod.
	// Defaults to 0.
	GracePeriodCriticalPods time.Duration `json:"gracePeriodCriticalPods,omitempty"`
	// GracePeriodByPodPriority replaces the two periods above with one
	// group per entry (the kubelet's shutdownGracePeriodByPodPriority):
	// pods from each Priority up to the next entry's get its
	// GracePeriodSeconds, the lowest priorities first. Defaults to none.
	GracePeriodByPodPriority []PriorityGracePeriod `json:"gracePeriodByPodPriority,omitempty"`
	// StateDirectory is where StateFile keeps the last shutdown's start
	// and end times, which the graceful shutdown metrics show after a
	// restart (the kubelet's root directory). Defaults to "": no file.
	StateDirectory string `json:"-"`
	// NodeName is the node the shutdown events are about. Defaults to ""
	// (nodekit sets the agent's node name).
	NodeName string `json:"-"`
}

// PriorityGracePeriod is one group of GracePeriodByPodPriority.
type PriorityGracePeriod struct {
	// Priority is the lowest pod priority of the group.
	Priority int32 `json:"priority"`
	// GracePeriodSeconds is the group's share of the shutdown.
	GracePeriodSeconds int64 `json:"shutdownGracePeriodSeconds"`
}

// Validate checks the policy as the kubelet's configuration validation
// does.
func (c Config) Validate() error {
	var errs []error
	if c.GracePeriod < 0 {
		errs = append(errs, fmt.Errorf("shutdownGracePeriod %v must be >= 0", c.GracePeriod))
	}
	if c.GracePeriodCriticalPods < 0 {
		errs = append(errs, fmt.Errorf("shutdownGracePeriodCriticalPods %v must be >= 0", c.GracePeriodCriticalPods))
	}
	if c.GracePeriodCriticalPods > c.GracePeriod {
		errs = append(errs, fmt.Errorf("shutdownGracePeriodCriticalPods %v must be <= shutdownGracePeriod %v",
			c.GracePeriodCriticalPods, c.GracePeriod))
	}
	if len(c.GracePeriodByPodPriority) > 0 && (c.GracePeriod != 0 || c.GracePeriodCriticalPods != 0) {
		errs = append(errs, errors.New("cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time"))
	}
	seen := map[int32]bool{}
	for _, p := range c.GracePeriodByPodPriority {
		if p.GracePeriodSeconds < 0 {
			errs = append(errs, fmt.Errorf("shutdownGracePeriodByPodPriority: priority %d: shutdownGracePeriodSeconds %d must be >= 0",
				p.Priority, p.GracePeriodSeconds))
		}
		if seen[p.Priority] {
			errs = append(errs, fmt.Errorf("shutdownGracePeriodByPodPriority: priority %d appears twice", p.Priority))
		}
		seen[p.Priority] = true
	}
	return errors.Join(errs...)
}

// Groups are the policy's priority groups, lowest priority first, each
// with no pods; none when graceful shutdown is off. As the kubelet,
// GracePeriod and GracePeriodCriticalPods become a group at priority 0
// with their difference and one at SystemCriticalPriority with
// GracePeriodCriticalPods, each truncated to whole seconds.
func (c Config) Groups() []Group {
	var groups []Group
	switch {
	case len(c.GracePeriodByPodPriority) > 0:
		for _, p := range c.GracePeriodByPodPriority {
			groups = append(groups, Group{Priority: p.Priority, GracePeriodSeconds: p.GracePeriodSeconds})
		}
	case c.GracePeriod > 0 && c.GracePeriodCriticalPods <= c.GracePeriod:
		groups = []Group{
			{Priority: 0, GracePeriodSeconds: int64((c.GracePeriod - c.GracePeriodCriticalPods) / time.Second)},
			{Priority: SystemCriticalPriority, GracePeriodSeconds: int64(c.GracePeriodCriticalPods / time.Second)},
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Priority < groups[j].Priority })
	return groups
}
