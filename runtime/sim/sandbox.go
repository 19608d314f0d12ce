package sim

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandbox is a simulated pod sandbox.
type sandbox struct {
	id          string
	seq         uint64
	name        string // reserved name
	meta        runtimeapi.PodSandboxMetadata
	state       runtimeapi.PodSandboxState
	createdAt   int64
	ip          netip.Addr // invalid for a host-network sandbox
	labels      map[string]string
	annotations map[string]string
	handler     string
	logDir      string
	nsOptions   *runtimeapi.NamespaceOption
	containers  map[string]*container
}

// ipPool hands out sandbox addresses from 10.88.0.0/16.
type ipPool struct {
	next netip.Addr
	used map[netip.Addr]bool
}

var podCIDR = netip.MustParsePrefix("10.88.0.0/16")

func newIPPool() ipPool {
	return ipPool{next: podCIDR.Addr().Next().Next(), used: map[netip.Addr]bool{}}
}

// allocate returns the next free address after the last one handed out,
// skipping the network, gateway (.1) and broadcast addresses.
func (p *ipPool) allocate() (netip.Addr, error) {
	for range 1 << 16 {
		a := p.next
		p.next = a.Next()
		if !podCIDR.Contains(p.next) {
			p.next = podCIDR.Addr().Next().Next()
		}
		b := a.As4()
		if !podCIDR.Contains(a) || b[3] == 0 || b[3] == 255 || p.used[a] {
			continue
		}
		p.used[a] = true
		return a, nil
	}
	return netip.Addr{}, status.Error(codes.ResourceExhausted, "sim: no free address in 10.88.0.0/16")
}

func (p *ipPool) release(a netip.Addr) { delete(p.used, a) }

// RunPodSandbox creates a ready sandbox and gives it an address from
// 10.88.0.0/16 unless it uses the node's network. The pod's annotations,
// kept on the sandbox, script its containers.
func (r *Runtime) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	if err := r.begin(ctx, "RunPodSandbox"); err != nil {
		return "", err
	}
	md := config.GetMetadata()
	if md.GetName() == "" || md.GetNamespace() == "" || md.GetUid() == "" {
		return "", status.Error(codes.InvalidArgument, "sim: sandbox config must have metadata with name, namespace and uid")
	}
	now := r.nanos()
	id := r.newID()
	sb := &sandbox{
		id:   id,
		name: fmt.Sprintf("%s_%s_%s_%d", md.GetName(), md.GetNamespace(), md.GetUid(), md.GetAttempt()),
		meta: runtimeapi.PodSandboxMetadata{
			Name: md.GetName(), Namespace: md.GetNamespace(), Uid: md.GetUid(), Attempt: md.GetAttempt(),
		},
		state:       runtimeapi.PodSandboxState_SANDBOX_READY,
		createdAt:   now,
		labels:      maps.Clone(config.GetLabels()),
		annotations: maps.Clone(config.GetAnnotations()),
		handler:     runtimeHandler,
		logDir:      config.GetLogDirectory(),
		nsOptions:   cloneNamespaceOptions(config.GetLinux().GetSecurityContext().GetNamespaceOptions()),
		containers:  map[string]*container{},
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if other, ok := r.names[sb.name]; ok {
		return "", status.Errorf(codes.AlreadyExists, "sim: sandbox name %q is reserved for %q", sb.name, other)
	}
	if sb.nsOptions.GetNetwork() != runtimeapi.NamespaceMode_NODE {
		ip, err := r.ips.allocate()
		if err != nil {
			return "", err
		}
		sb.ip = ip
	}
	r.seq++
	sb.seq = r.seq
	r.names[sb.name] = id
	r.sandboxes[id] = sb
	r.sandboxesByPod.add(sb.labels, id, sb)
	r.emitLocked(sb, id, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, now)
	r.emitLocked(sb, id, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, now)
	r.log.V(4).Info("sandbox created", "sandbox", id, "pod", md.GetNamespace()+"/"+md.GetName(), "ip", sb.ip)
	return id, nil
}

func cloneNamespaceOptions(o *runtimeapi.NamespaceOption) *runtimeapi.NamespaceOption {
	if o == nil {
		return nil
	}
	return &runtimeapi.NamespaceOption{Network: o.GetNetwork(), Pid: o.GetPid(), Ipc: o.GetIpc(), TargetId: o.GetTargetId()}
}

// StopPodSandbox kills every running container of the sandbox (exit code
// 137) and makes it not ready. Stopping a stopped sandbox does nothing.
func (r *Runtime) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	if err := r.begin(ctx, "StopPodSandbox"); err != nil {
		return err
	}
	now := r.nanos()
	r.mu.Lock()
	sb, err := r.sandboxLocked(podSandboxID)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	cancels := r.stopSandboxLocked(sb, now)
	r.mu.Unlock()
	runAll(cancels)
	return nil
}

// stopSandboxLocked kills the sandbox's running containers and marks it not
// ready; it returns the scheduled exits to cancel once mu is released.
func (r *Runtime) stopSandboxLocked(sb *sandbox, now int64) []func() {
	var cancels []func()
	for _, c := range sortedContainers(sb.containers) {
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			if f := r.exitLocked(c, now, ExitCodeKilled); f != nil {
				cancels = append(cancels, f)
			}
		}
	}
	if sb.state == runtimeapi.PodSandboxState_SANDBOX_READY {
		sb.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		r.emitLocked(sb, sb.id, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT, now)
	}
	return cancels
}

// RemovePodSandbox stops the sandbox if needed and removes it with all its
// containers, as containerd does. Removing an unknown sandbox is not an
// error.
func (r *Runtime) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	if err := r.begin(ctx, "RemovePodSandbox"); err != nil {
		return err
	}
	now := r.nanos()
	r.mu.Lock()
	sb, err := r.sandboxLocked(podSandboxID)
	if err != nil {
		r.mu.Unlock()
		return nil
	}
	cancels := r.stopSandboxLocked(sb, now)
	for _, c := range sortedContainers(sb.containers) {
		r.removeContainerLocked(c, now)
	}
	delete(r.sandboxes, sb.id)
	r.sandboxesByPod.remove(sb.labels, sb.id)
	delete(r.names, sb.name)
	if sb.ip.IsValid() {
		r.ips.release(sb.ip)
	}
	r.emitLocked(sb, sb.id, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT, now)
	r.mu.Unlock()
	runAll(cancels)
	return nil
}

// PodSandboxStatus reports the sandbox, and the statuses of its containers
// as the evented PLEG reads them.
func (r *Runtime) PodSandboxStatus(ctx context.Context, podSandboxID string, _ bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	if err := r.begin(ctx, "PodSandboxStatus"); err != nil {
		return nil, err
	}
	now := r.nanos()
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, err := r.sandboxLocked(podSandboxID)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.PodSandboxStatusResponse{
		Status:             sb.statusLocked(),
		ContainersStatuses: sb.containerStatusesLocked(),
		Timestamp:          now,
	}, nil
}

// ListPodSandbox lists the sandboxes that match filter (ID or unique ID
// prefix, state, label selector), oldest first. As with ListContainers, the
// Labels and Annotations maps of the answer are shared with the simulator
// (they never change after RunPodSandbox): read them, never write them.
func (r *Runtime) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if err := r.begin(ctx, "ListPodSandbox"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	candidates := r.sandboxesByPod.candidates(filter.GetLabelSelector(), r.sandboxes)
	found := make([]*sandbox, 0, len(candidates))
	for _, sb := range candidates {
		if !matchID(sb.id, filter.GetId()) || !matchLabels(sb.labels, filter.GetLabelSelector()) {
			continue
		}
		if st := filter.GetState(); st != nil && st.GetState() != sb.state {
			continue
		}
		found = append(found, sb)
	}
	slices.SortFunc(found, func(a, b *sandbox) int { return cmp.Compare(a.seq, b.seq) })
	return listedSandboxes(found), nil
}

// listedSandboxes builds the answer of ListPodSandbox: new messages, taken
// from slabs allocated once per list, with the shared label and annotation
// maps.
func listedSandboxes(sbs []*sandbox) []*runtimeapi.PodSandbox {
	out := make([]*runtimeapi.PodSandbox, len(sbs))
	msgs := make([]runtimeapi.PodSandbox, len(sbs))
	metas := make([]runtimeapi.PodSandboxMetadata, len(sbs))
	for i, sb := range sbs {
		md := &metas[i]
		md.Name, md.Namespace, md.Uid, md.Attempt = sb.meta.Name, sb.meta.Namespace, sb.meta.Uid, sb.meta.Attempt
		m := &msgs[i]
		m.Id, m.Metadata, m.State, m.CreatedAt = sb.id, md, sb.state, sb.createdAt
		m.Labels, m.Annotations, m.RuntimeHandler = sb.labels, sb.annotations, sb.handler
		out[i] = m
	}
	return out
}

// sandboxLocked finds a sandbox by ID or unique ID prefix.
func (r *Runtime) sandboxLocked(id string) (*sandbox, error) {
	if sb, ok := r.sandboxes[id]; ok {
		return sb, nil
	}
	found, err := lookupPrefix(r.sandboxes, id, "sandbox")
	if err != nil {
		return nil, err
	}
	return found, nil
}

func (sb *sandbox) metadata() *runtimeapi.PodSandboxMetadata {
	return &runtimeapi.PodSandboxMetadata{Name: sb.meta.Name, Namespace: sb.meta.Namespace, Uid: sb.meta.Uid, Attempt: sb.meta.Attempt}
}

// statusLocked builds the sandbox's CRI status; the caller owns it.
func (sb *sandbox) statusLocked() *runtimeapi.PodSandboxStatus {
	st := &runtimeapi.PodSandboxStatus{
		Id: sb.id, Metadata: sb.metadata(), State: sb.state, CreatedAt: sb.createdAt,
		Network:        &runtimeapi.PodSandboxNetworkStatus{},
		Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: cloneNamespaceOptions(sb.nsOptions)}},
		Labels:         maps.Clone(sb.labels),
		Annotations:    maps.Clone(sb.annotations),
		RuntimeHandler: sb.handler,
	}
	if sb.ip.IsValid() {
		st.Network.Ip = sb.ip.String()
	}
	return st
}

// containerStatusesLocked builds the statuses of the sandbox's containers,
// oldest first.
func (sb *sandbox) containerStatusesLocked() []*runtimeapi.ContainerStatus {
	out := make([]*runtimeapi.ContainerStatus, 0, len(sb.containers))
	for _, c := range sortedContainers(sb.containers) {
		out = append(out, c.statusLocked())
	}
	return out
}

func runAll(fs []func()) {
	for _, f := range fs {
		f()
	}
}
