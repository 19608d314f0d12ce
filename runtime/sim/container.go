package sim

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// container is a simulated container.
type container struct {
	id, sandboxID string
	seq           uint64
	name          string // reserved name
	meta          runtimeapi.ContainerMetadata
	userImage     string // the image as the user wrote it
	image         *image
	labels        map[string]string
	annotations   map[string]string
	logPath       string
	script        script

	state                          runtimeapi.ContainerState
	createdAt, startedAt, finished int64
	exitCode                       int32
	reason                         string
	starting                       bool
	// run counts starts, so that a scheduled exit of an earlier run is
	// ignored; cancelExit cancels the scheduled exit of the current run.
	run        int
	cancelExit func()
}

// CreateContainer creates a container in a ready sandbox. The container's
// script is read from the sandbox's annotations: a bad scripting annotation
// is an InvalidArgument error naming it. The image must be present (see
// Config.Images).
func (r *Runtime) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	if err := r.begin(ctx, "CreateContainer"); err != nil {
		return "", err
	}
	md := config.GetMetadata()
	if md.GetName() == "" {
		return "", status.Error(codes.InvalidArgument, "sim: container config must have metadata with a name")
	}
	now, id := r.nanos(), r.newID()
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, err := r.sandboxLocked(podSandboxID)
	if err != nil {
		return "", err
	}
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return "", status.Errorf(codes.FailedPrecondition, "sim: sandbox %q is not ready", sb.id)
	}
	sc, err := parseScript(sb.annotations, md.GetName())
	if err != nil {
		return "", status.Errorf(codes.InvalidArgument, "sim: container %q of pod %s/%s: %v", md.GetName(), sb.meta.Namespace, sb.meta.Name, err)
	}
	img, ok := r.resolveImageLocked(config.GetImage().GetImage())
	if !ok {
		return "", status.Errorf(codes.NotFound, "sim: image %q not found", config.GetImage().GetImage())
	}
	c := &container{
		id: id, sandboxID: sb.id,
		name:        fmt.Sprintf("%s_%s_%s_%s_%d", md.GetName(), sb.meta.Name, sb.meta.Namespace, sb.meta.Uid, md.GetAttempt()),
		meta:        runtimeapi.ContainerMetadata{Name: md.GetName(), Attempt: md.GetAttempt()},
		userImage:   config.GetImage().GetUserSpecifiedImage(),
		image:       img,
		labels:      maps.Clone(config.GetLabels()),
		annotations: maps.Clone(config.GetAnnotations()),
		script:      sc,
		state:       runtimeapi.ContainerState_CONTAINER_CREATED,
		createdAt:   now,
	}
	if config.GetLogPath() != "" && sb.logDir != "" {
		c.logPath = filepath.Join(sb.logDir, config.GetLogPath())
	}
	if other, ok := r.names[c.name]; ok {
		return "", status.Errorf(codes.AlreadyExists, "sim: container name %q is reserved for %q", c.name, other)
	}
	r.seq++
	c.seq = r.seq
	r.names[c.name] = id
	r.containers[id] = c
	r.containersByPod.add(c.labels, id, c)
	sb.containers[id] = c
	r.emitLocked(sb, id, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, now)
	return id, nil
}

// StartContainer starts a created container. With a start-delay script it
// first blocks that long on the clock; with crash-on-start the container
// exits right after starting; with exit-after its exit is scheduled on the
// clock.
func (r *Runtime) StartContainer(ctx context.Context, containerID string) error {
	if err := r.begin(ctx, "StartContainer"); err != nil {
		return err
	}
	r.mu.Lock()
	c, err := r.startableLocked(containerID)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	c.starting = true
	sc := c.script
	r.mu.Unlock()

	err = r.sleep(ctx, sc.startDelay)
	now := r.nanos()
	r.mu.Lock()
	c.starting = false
	if err != nil {
		r.mu.Unlock()
		return err
	}
	if _, ok := r.containers[c.id]; !ok {
		r.mu.Unlock()
		return notFound("container", containerID)
	}
	sb := r.sandboxes[c.sandboxID]
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		r.mu.Unlock()
		return status.Errorf(codes.FailedPrecondition, "sim: sandbox %q of container %q stopped while it was starting", sb.id, c.id)
	}
	c.state, c.startedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, now
	c.run++
	run := c.run
	r.emitLocked(sb, c.id, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, now)
	if sc.crashOnStart || (sc.hasExit && sc.exitAfter == 0) {
		r.exitLocked(c, now, sc.scriptedExitCode())
	}
	r.mu.Unlock()
	if !sc.hasExit || sc.crashOnStart || sc.exitAfter == 0 {
		return nil
	}
	r.scheduleExit(c, run, now+int64(sc.exitAfter), sc.scriptedExitCode())
	return nil
}

// startableLocked finds a container that may be started.
func (r *Runtime) startableLocked(id string) (*container, error) {
	c, err := r.containerLocked(id)
	if err != nil {
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED || c.starting {
		return nil, status.Errorf(codes.FailedPrecondition, "sim: container %q is %s, not created", c.id, c.state)
	}
	if sb := r.sandboxes[c.sandboxID]; sb == nil || sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "sim: sandbox %q of container %q is not ready", c.sandboxID, c.id)
	}
	return c, nil
}

// scheduleExit makes run number run of c exit with code at the clock time
// at (nanoseconds), unless it stopped before.
func (r *Runtime) scheduleExit(c *container, run int, at int64, code int32) {
	cancel := r.schedule(time.Duration(at-r.nanos()), func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if cur, ok := r.containers[c.id]; ok && cur.run == run && cur.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			c.cancelExit = nil // fired; never cancel from the clock's callback
			r.exitLocked(c, at, code)
		}
	})
	r.mu.Lock()
	if cur, ok := r.containers[c.id]; ok && cur.run == run && cur.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		c.cancelExit, cancel = cancel, nil
	}
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// exitLocked makes a running container exit at finishedAt (nanoseconds) with
// code and emits its STOPPED event. It returns the cancellation of its
// scheduled exit, if any, for the caller to run after releasing mu.
func (r *Runtime) exitLocked(c *container, finishedAt int64, code int32) func() {
	c.state, c.finished, c.exitCode = runtimeapi.ContainerState_CONTAINER_EXITED, finishedAt, code
	c.reason = "Completed"
	if code != 0 {
		c.reason = "Error"
	}
	r.emitLocked(r.sandboxes[c.sandboxID], c.id, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT, finishedAt)
	cancel := c.cancelExit
	c.cancelExit = nil
	return cancel
}

// StopContainer stops a running container. A simulated process handles
// SIGTERM at once and exits with ExitCodeTerm, unless its script ignores
// TERM: then StopContainer waits the whole timeout (seconds) on the clock and
// kills it (ExitCodeKilled). A timeout of 0 kills at once. Stopping a
// container that does not run does nothing.
func (r *Runtime) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	if err := r.begin(ctx, "StopContainer"); err != nil {
		return err
	}
	now := r.nanos()
	r.mu.Lock()
	c, err := r.containerLocked(containerID)
	if err != nil || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.mu.Unlock()
		return err
	}
	run := c.run
	if timeout <= 0 || !c.script.ignoreTerm {
		code := int32(ExitCodeTerm)
		if timeout <= 0 {
			code = ExitCodeKilled
		}
		cancel := r.exitLocked(c, now, code)
		r.mu.Unlock()
		callIf(cancel)
		return nil
	}
	r.mu.Unlock()
	if err := r.sleep(ctx, time.Duration(timeout)*time.Second); err != nil {
		return err
	}
	now = r.nanos()
	var cancel func()
	r.mu.Lock()
	if cur, ok := r.containers[c.id]; ok && cur.run == run && cur.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		cancel = r.exitLocked(c, now, ExitCodeKilled)
	}
	r.mu.Unlock()
	callIf(cancel)
	return nil
}

func callIf(f func()) {
	if f != nil {
		f()
	}
}

// RemoveContainer removes a container that does not run; removing a running
// container is a FailedPrecondition error, removing an unknown one is not an
// error.
func (r *Runtime) RemoveContainer(ctx context.Context, containerID string) error {
	if err := r.begin(ctx, "RemoveContainer"); err != nil {
		return err
	}
	now := r.nanos()
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(containerID)
	if err != nil {
		return nil
	}
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING || c.starting {
		return status.Errorf(codes.FailedPrecondition, "sim: container %q is running; stop it before removing it", c.id)
	}
	r.removeContainerLocked(c, now)
	return nil
}

// removeContainerLocked forgets a container that does not run.
func (r *Runtime) removeContainerLocked(c *container, now int64) {
	delete(r.containers, c.id)
	r.containersByPod.remove(c.labels, c.id)
	delete(r.names, c.name)
	sb := r.sandboxes[c.sandboxID]
	if sb != nil {
		delete(sb.containers, c.id)
	}
	r.emitLocked(sb, c.id, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT, now)
}

// ListContainers lists the containers that match filter (ID or unique ID
// prefix, state, sandbox ID or prefix, label selector), oldest first. The
// Labels and Annotations maps of the answer are the simulator's own, shared
// by every list (they never change after CreateContainer): read them, never
// write them. Cloning them was most of what a PLEG relist allocated with
// 100 pods per node (docs/cluster-scale.md); ContainerStatus still answers
// copies, and a client over gRPC gets its own.
func (r *Runtime) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if err := r.begin(ctx, "ListContainers"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	candidates := r.containersByPod.candidates(filter.GetLabelSelector(), r.containers)
	found := make([]*container, 0, len(candidates))
	for _, c := range candidates {
		if !matchID(c.id, filter.GetId()) || !matchID(c.sandboxID, filter.GetPodSandboxId()) ||
			!matchLabels(c.labels, filter.GetLabelSelector()) {
			continue
		}
		if st := filter.GetState(); st != nil && st.GetState() != c.state {
			continue
		}
		found = append(found, c)
	}
	sortBySeq(found)
	return listedContainers(found), nil
}

// listedContainers builds the answer of ListContainers: new messages, taken
// from slabs allocated once per list, with the shared label and annotation
// maps.
func listedContainers(cs []*container) []*runtimeapi.Container {
	out := make([]*runtimeapi.Container, len(cs))
	msgs := make([]runtimeapi.Container, len(cs))
	metas := make([]runtimeapi.ContainerMetadata, len(cs))
	images := make([]runtimeapi.ImageSpec, len(cs))
	for i, c := range cs {
		metas[i].Name, metas[i].Attempt = c.meta.Name, c.meta.Attempt
		images[i].Image, images[i].UserSpecifiedImage = c.image.name, c.userImage
		m := &msgs[i]
		m.Id, m.PodSandboxId, m.Metadata, m.Image = c.id, c.sandboxID, &metas[i], &images[i]
		m.ImageRef, m.ImageId, m.State, m.CreatedAt = c.image.id, c.image.id, c.state, c.createdAt
		m.Labels, m.Annotations = c.labels, c.annotations
		out[i] = m
	}
	return out
}

// ContainerStatus reports one container; NotFound for an unknown ID.
func (r *Runtime) ContainerStatus(ctx context.Context, containerID string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	if err := r.begin(ctx, "ContainerStatus"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(containerID)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatusResponse{Status: c.statusLocked()}, nil
}

// UpdateContainerResources accepts and ignores new resources of a known
// container.
func (r *Runtime) UpdateContainerResources(ctx context.Context, containerID string, _ *runtimeapi.ContainerResources) error {
	if err := r.begin(ctx, "UpdateContainerResources"); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.containerLocked(containerID)
	return err
}

// ReopenContainerLog succeeds for a running container: there is no log.
func (r *Runtime) ReopenContainerLog(ctx context.Context, containerID string) error {
	if err := r.begin(ctx, "ReopenContainerLog"); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(containerID)
	if err == nil && c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		err = status.Errorf(codes.FailedPrecondition, "sim: container %q is not running", c.id)
	}
	return err
}

// containerLocked finds a container by ID or unique ID prefix.
func (r *Runtime) containerLocked(id string) (*container, error) {
	if c, ok := r.containers[id]; ok {
		return c, nil
	}
	return lookupPrefix(r.containers, id, "container")
}

func (c *container) metadata() *runtimeapi.ContainerMetadata {
	return &runtimeapi.ContainerMetadata{Name: c.meta.Name, Attempt: c.meta.Attempt}
}

func (c *container) imageSpec() *runtimeapi.ImageSpec {
	return &runtimeapi.ImageSpec{Image: c.image.name, UserSpecifiedImage: c.userImage}
}

// statusLocked builds the container's CRI status; the caller owns it.
func (c *container) statusLocked() *runtimeapi.ContainerStatus {
	return &runtimeapi.ContainerStatus{
		Id: c.id, Metadata: c.metadata(), State: c.state,
		CreatedAt: c.createdAt, StartedAt: c.startedAt, FinishedAt: c.finished, ExitCode: c.exitCode,
		Image: c.imageSpec(), ImageRef: c.image.id, ImageId: c.image.id, Reason: c.reason,
		Labels: maps.Clone(c.labels), Annotations: maps.Clone(c.annotations), LogPath: c.logPath,
	}
}
