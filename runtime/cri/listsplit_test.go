package cri

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// cappedRuntime answers a list whose encoded answer exceeds limit bytes as
// gRPC does: codes.ResourceExhausted. It counts the lists that named no pod.
type cappedRuntime struct {
	criapi.RuntimeService

	mu    sync.Mutex
	limit int
	// unfiltered counts ListPodSandbox calls without a pod UID label.
	unfiltered int
}

func (r *cappedRuntime) tooLarge(m proto.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := proto.Size(m); n > r.limit {
		return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", n, r.limit)
	}
	return nil
}

func (r *cappedRuntime) ListPodSandbox(ctx context.Context, f *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if f.GetLabelSelector()[noderuntime.LabelPodUID] == "" {
		r.mu.Lock()
		r.unfiltered++
		r.mu.Unlock()
	}
	out, err := r.RuntimeService.ListPodSandbox(ctx, f)
	if err != nil {
		return nil, err
	}
	if err := r.tooLarge(&runtimeapi.ListPodSandboxResponse{Items: out}); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *cappedRuntime) ListContainers(ctx context.Context, f *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	out, err := r.RuntimeService.ListContainers(ctx, f)
	if err != nil {
		return nil, err
	}
	if err := r.tooLarge(&runtimeapi.ListContainersResponse{Containers: out}); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *cappedRuntime) setLimit(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limit = n
}

func (r *cappedRuntime) unfilteredLists() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unfiltered
}

// podSummary is a GetPods answer as "uid:sandboxes/containers" strings.
func podSummary(pods []*noderuntime.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, fmt.Sprintf("%s:%d/%d", p.ID, len(p.Sandboxes), len(p.Containers)))
	}
	slices.Sort(out)
	return out
}

// TestGetPodsListsPodByPodWhenAListOverflows: when the runtime's full
// answer is over gRPC's message limit, GetPods still returns every pod,
// listing pod by pod: pods with containers, and a pod of only a sandbox
// this manager ran. A lone sandbox is also found by an agent that has no
// cache yet once its pod is in an earlier answer.
func TestGetPodsListsPodByPodWhenAListOverflows(t *testing.T) {
	e := newTestEnv(t)
	capped := &cappedRuntime{RuntimeService: e.rs, limit: 1 << 30}
	e.m.rs = capped
	// Sandboxes of 4 KB and containers of 0.5 KB: both full lists overflow.
	annotated := func(uid string, names ...string) *corev1.Pod {
		pod := newPod(uid, names...)
		pod.Annotations["example.com/note"] = strings.Repeat("n", 4000)
		if err := e.sync(t, pod).Error(); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	for i := range 4 {
		annotated(fmt.Sprintf("u%d", i), "a", "b")
	}
	lone := annotated("lone", "a")
	for _, c := range e.status(t, lone).ContainerStatuses {
		if err := e.rs.RemoveContainer(context.Background(), c.ID.ID); err != nil {
			t.Fatal(err)
		}
	}
	want := podSummary(e.listAll(t))
	running, err := e.m.GetPods(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	wantRunning := podSummary(running)
	// One pod's objects fit, all of them do not.
	one, err := e.rs.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{noderuntime.LabelPodUID: "u0"}})
	if err != nil {
		t.Fatal(err)
	}
	oneCts, _ := e.rs.ListContainers(context.Background(), &runtimeapi.ContainerFilter{LabelSelector: map[string]string{noderuntime.LabelPodUID: "u0"}})
	capped.setLimit(max(proto.Size(&runtimeapi.ListPodSandboxResponse{Items: one}), proto.Size(&runtimeapi.ListContainersResponse{Containers: oneCts})) + 100)

	got, err := e.m.GetPods(context.Background(), true)
	if err != nil {
		t.Fatalf("GetPods(all) with an overflowing list: %v", err)
	}
	if !slices.Equal(podSummary(got), want) {
		t.Errorf("GetPods(all) pod by pod = %v, want %v", podSummary(got), want)
	}
	gotRunning, err := e.m.GetPods(context.Background(), false)
	if err != nil {
		t.Fatalf("GetPods(running) with an overflowing list: %v", err)
	}
	if !slices.Equal(podSummary(gotRunning), wantRunning) {
		t.Errorf("GetPods(running) pod by pod = %v, want %v", podSummary(gotRunning), wantRunning)
	}

	// A new pod's sandbox, still without containers, is listed too.
	e.synced(t, "new", "a")
	for _, c := range e.status(t, newPod("new")).ContainerStatuses {
		if err := e.rs.RemoveContainer(context.Background(), c.ID.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got := podSummary(e.listAll(t)); !slices.Contains(got, "new:1/0") || !slices.Contains(got, "lone:1/0") {
		t.Errorf("GetPods(all) after a new sandbox = %v, want new:1/0 and lone:1/0 in it", got)
	}
}

// TestGetPodsTriesAFullListAgainAfterSplitRetry: while listing pod by pod,
// GetPods makes no full listing (the runtime would encode every object for
// nothing) until splitRetry has passed; then a full listing that fits ends
// the pod-by-pod mode.
func TestGetPodsTriesAFullListAgainAfterSplitRetry(t *testing.T) {
	e := newTestEnv(t)
	capped := &cappedRuntime{RuntimeService: e.rs, limit: 1 << 30}
	e.m.rs = capped
	for i := range 3 {
		e.synced(t, fmt.Sprintf("u%d", i), "a")
	}
	capped.setLimit(600)
	e.listAll(t)
	if n := capped.unfilteredLists(); n != 1 {
		t.Fatalf("%d full sandbox listings, want the one that overflowed", n)
	}
	e.listAll(t)
	e.clk.Step(splitRetry / 2)
	e.listAll(t)
	if n := capped.unfilteredLists(); n != 1 {
		t.Errorf("%d full sandbox listings within splitRetry, want 1", n)
	}
	capped.setLimit(1 << 30)
	e.clk.Step(splitRetry)
	if got := len(e.listAll(t)); got != 3 {
		t.Errorf("GetPods after the retry: %d pods, want 3", got)
	}
	e.listAll(t)
	if n := capped.unfilteredLists(); n != 3 {
		t.Errorf("%d full sandbox listings, want 3 (the overflow, the retry, the next)", n)
	}
}
