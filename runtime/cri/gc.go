package cri

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crierrors "k8s.io/cri-api/pkg/errors"

	noderuntime "github.com/nodekit/nodekit/runtime"

	"github.com/nodekit/nodekit/internal/mount"
)

// gcPod is one pod's objects as GarbageCollect sees them.
type gcPod struct {
	uid             types.UID
	name, namespace string
	containers      []*runtimeapi.Container
	sandboxes       []*runtimeapi.PodSandbox
}

// running reports whether any container runs or any sandbox is ready.
func (p *gcPod) running() bool {
	for _, c := range p.containers {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	for _, s := range p.sandboxes {
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			return true
		}
	}
	return false
}

// GarbageCollect removes this instance's dead objects. For a pod that still
// exists it removes every exited container except the newest one of each
// name (so logs and exit codes survive), and every not-ready sandbox that no
// container uses except the newest sandbox. For a pod for which isPodRemoved
// returns true and in which nothing runs, it removes every container, then
// every sandbox, then the pod's log directory and its pod directory
// (<RootDir>/pods/<uid>, volumes included, tmpfs unmounted first) and its
// pod cgroup. A removed container's log file and its rotated files go
// with it. Pod directories this manager made for removed pods that have
// nothing left in the runtime are removed too. It also forgets stale
// CrashLoopBackOff and ImagePullBackOff entries. The returned error joins every failure; objects
// already gone are not errors. Safe to call concurrently with SyncPod.
func (m *Manager) GarbageCollect(ctx context.Context, isPodRemoved func(types.UID) bool) error {
	return m.collect(ctx, isPodRemoved, nil)
}

// DeleteAllUnusedContainers is the kubelet's
// containerGC.DeleteAllUnusedContainers, which the eviction manager calls
// to reclaim disk before it evicts a pod: GarbageCollect, and in addition,
// for each pod that still exists but for which isPodTerminated returns
// true and in which nothing runs, every container that does not run and
// every sandbox that is not ready, the newest included (the kubelet's
// evictNonDeletedPods). The pod's directories and logs stay (its status
// still names them). There is no minimum age, as there is none in
// GarbageCollect. Safe to call concurrently with SyncPod.
func (m *Manager) DeleteAllUnusedContainers(ctx context.Context, isPodRemoved, isPodTerminated func(types.UID) bool) error {
	return m.collect(ctx, isPodRemoved, isPodTerminated)
}

// collect is GarbageCollect, and DeleteAllUnusedContainers when
// isPodTerminated is not nil.
func (m *Manager) collect(ctx context.Context, isPodRemoved, isPodTerminated func(types.UID) bool) error {
	defer m.backOff.GC()
	defer m.pulls.gc()
	defer m.removeDeadLogLinks(ctx)
	pods, err := m.gcListPods(ctx)
	if err != nil {
		return err
	}
	var errs []error
	present := map[types.UID]bool{}
	for _, p := range pods {
		if !isPodRemoved(p.uid) {
			present[p.uid] = true
			if isPodTerminated != nil && isPodTerminated(p.uid) && !p.running() {
				errs = append(errs, m.removeAllDead(ctx, p)...)
				continue
			}
			errs = append(errs, m.evictDeadContainers(ctx, p)...)
			continue
		}
		if p.running() {
			m.log.V(4).Info("removed pod still runs, not collecting it", "pod", podFullName(p.name, p.namespace, p.uid))
			present[p.uid] = true
			continue
		}
		if perrs := m.removePod(ctx, p); len(perrs) > 0 {
			present[p.uid] = true
			errs = append(errs, perrs...)
		}
	}
	errs = append(errs, m.removeOrphanPodDirs(isPodRemoved, present)...)
	return errors.Join(errs...)
}

// gcListPods lists every sandbox and container of this instance, by pod.
func (m *Manager) gcListPods(ctx context.Context) ([]*gcPod, error) {
	sandboxes, err := m.rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: m.ownLabels()})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := m.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: m.ownLabels()})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	byUID := map[types.UID]*gcPod{}
	var order []types.UID
	get := func(labels map[string]string) *gcPod {
		uid := podUIDOf(labels)
		p, ok := byUID[uid]
		if !ok {
			p = &gcPod{uid: uid, name: labels[noderuntime.LabelPodName], namespace: labels[noderuntime.LabelPodNamespace]}
			byUID[uid] = p
			order = append(order, uid)
		}
		return p
	}
	for _, s := range sandboxes {
		p := get(s.GetLabels())
		p.sandboxes = append(p.sandboxes, s)
	}
	for _, c := range containers {
		p := get(c.GetLabels())
		p.containers = append(p.containers, c)
	}
	out := make([]*gcPod, 0, len(order))
	for _, uid := range order {
		p := byUID[uid]
		sort.SliceStable(p.containers, func(i, j int) bool { return p.containers[i].GetCreatedAt() > p.containers[j].GetCreatedAt() })
		sort.SliceStable(p.sandboxes, func(i, j int) bool { return p.sandboxes[i].GetCreatedAt() > p.sandboxes[j].GetCreatedAt() })
		out = append(out, p)
	}
	return out, nil
}

// evictDeadContainers removes all but the newest exited container of each
// name, then the pod's unused old sandboxes.
func (m *Manager) evictDeadContainers(ctx context.Context, p *gcPod) []error {
	var errs []error
	seen := map[string]bool{}
	inUse := map[string]bool{}
	for _, c := range p.containers { // newest first
		name := c.GetMetadata().GetName()
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || !seen[name] {
			if c.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
				seen[name] = true
			}
			inUse[c.GetPodSandboxId()] = true
			continue
		}
		if err := m.removeContainer(ctx, p, c); err != nil {
			errs = append(errs, err)
			inUse[c.GetPodSandboxId()] = true
		}
	}
	for i, s := range p.sandboxes {
		if i == 0 || inUse[s.GetId()] || s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		if err := m.removeSandbox(ctx, p, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// removeAllDead removes every container and sandbox of a terminated pod
// in which nothing runs; the pod's directories stay.
func (m *Manager) removeAllDead(ctx context.Context, p *gcPod) []error {
	errs := m.removeObjects(ctx, p)
	m.log.V(2).Info("removed the dead containers of a terminated pod", "pod", podFullName(p.name, p.namespace, p.uid), "errors", len(errs))
	return errs
}

// removeObjects removes the pod's containers and then, once they are all
// gone, its sandboxes.
func (m *Manager) removeObjects(ctx context.Context, p *gcPod) []error {
	var errs []error
	for _, c := range p.containers {
		if err := m.removeContainer(ctx, p, c); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errs // keep the sandboxes until their containers are gone
	}
	for _, s := range p.sandboxes {
		if err := m.removeSandbox(ctx, p, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// removePod removes every container, every sandbox and the log directory of
// a pod that no longer exists.
func (m *Manager) removePod(ctx context.Context, p *gcPod) []error {
	errs := m.removeObjects(ctx, p)
	if len(errs) == 0 {
		errs = append(errs, m.removePodLogsAndSubPaths(p)...)
	}
	m.log.V(2).Info("collected removed pod", "pod", podFullName(p.name, p.namespace, p.uid), "errors", len(errs))
	return errs
}

// removePodLogsAndSubPaths removes, once a removed pod's containers are
// gone, its subPath mounts and its log directory. A UID or name that makes
// a path outside RootDir is an error, and nothing is removed for it.
func (m *Manager) removePodLogsAndSubPaths(p *gcPod) []error {
	var errs []error
	if dir, err := m.podDir(p.uid); err != nil {
		errs = append(errs, err)
	} else if err := mount.CleanSubPaths(dir); err != nil {
		errs = append(errs, fmt.Errorf("subPath mounts of pod %s: %w", podFullName(p.name, p.namespace, p.uid), err))
	}
	if p.name == "" {
		return errs
	}
	dir, err := m.podLogDir(p.namespace, p.name, p.uid)
	if err == nil {
		err = os.RemoveAll(dir)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("remove log directory of pod %s: %w", podFullName(p.name, p.namespace, p.uid), err))
	}
	return errs
}

func (m *Manager) removeContainer(ctx context.Context, p *gcPod, c *runtimeapi.Container) error {
	m.log.V(4).Info("removing dead container", "pod", podFullName(p.name, p.namespace, p.uid), "container", c.GetMetadata().GetName(), "containerID", c.GetId())
	if err := m.rs.RemoveContainer(ctx, c.GetId()); err != nil && !crierrors.IsNotFound(err) {
		return fmt.Errorf("remove container %q (%s) of pod %s: %w", c.GetMetadata().GetName(), c.GetId(), podFullName(p.name, p.namespace, p.uid), err)
	}
	return errors.Join(m.removeContainerLogs(p, c), m.removeLogLink(p, c))
}

// removeContainerLogs removes a removed container's log file and its
// rotated files, as the kubelet's removeContainerLog: the logs of a
// container that is gone only take disk space.
func (m *Manager) removeContainerLogs(p *gcPod, c *runtimeapi.Container) error {
	if p.name == "" || c.GetMetadata().GetName() == "" {
		return nil
	}
	dir, err := m.podLogDir(p.namespace, p.name, p.uid)
	if err == nil {
		dir, err = pathUnder(dir, c.GetMetadata().GetName())
	}
	if err != nil {
		return fmt.Errorf("logs of container %q of pod %s: %w", c.GetMetadata().GetName(), podFullName(p.name, p.namespace, p.uid), err)
	}
	current := filepath.Join(dir, strconv.Itoa(int(c.GetMetadata().GetAttempt()))+".log")
	rotated, _ := filepath.Glob(current + ".*")
	var errs []error
	for _, f := range append([]string{current}, rotated...) {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove log of container %q of pod %s: %w", c.GetMetadata().GetName(), podFullName(p.name, p.namespace, p.uid), err))
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) removeSandbox(ctx context.Context, p *gcPod, s *runtimeapi.PodSandbox) error {
	m.log.V(4).Info("removing dead sandbox", "pod", podFullName(p.name, p.namespace, p.uid), "sandbox", s.GetId())
	if err := m.rs.RemovePodSandbox(ctx, s.GetId()); err != nil && !crierrors.IsNotFound(err) {
		return fmt.Errorf("remove sandbox %s of pod %s: %w", s.GetId(), podFullName(p.name, p.namespace, p.uid), err)
	}
	return nil
}
