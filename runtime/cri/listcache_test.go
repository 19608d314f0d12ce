package cri

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// listAll is GetPods(all=true) that fails the test on error.
func (e *testEnv) listAll(t *testing.T) []*noderuntime.Pod {
	t.Helper()
	pods, err := e.m.GetPods(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// synced syncs a new pod of the named containers and fails the test when
// the sync fails.
func (e *testEnv) synced(t *testing.T, uid string, names ...string) *corev1.Pod {
	t.Helper()
	pod := newPod(uid, names...)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	return pod
}

// cachedIDs returns how many sandboxes and containers the full-list cache holds.
func (e *testEnv) cachedIDs() (sandboxes, containers int) {
	c := e.m.lists.of(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sandboxes), len(c.containers)
}

func TestGetPodsCacheNeverHidesAStateChange(t *testing.T) {
	e := newTestEnv(t)
	pod := e.synced(t, "u1", "a")
	if got := e.listAll(t)[0].Containers[0].State; got != noderuntime.ContainerStateRunning {
		t.Fatalf("first list: state %v, want running", got)
	}
	e.rs.setContainer(t, e.containerIDOf(t, pod, "a"), runtimeapi.ContainerState_CONTAINER_EXITED, 1, e.clk.Now())
	e.rs.setSandboxState(t, e.listAll(t)[0].Sandboxes[0].ID.ID, runtimeapi.PodSandboxState_SANDBOX_NOTREADY)
	p := e.listAll(t)[0]
	if got := p.Containers[0].State; got != noderuntime.ContainerStateExited {
		t.Errorf("after the container exited: state %v, want exited", got)
	}
	if got := p.Sandboxes[0].State; got != noderuntime.ContainerStateExited {
		t.Errorf("after the sandbox stopped: state %v, want exited", got)
	}
}

func TestGetPodsCacheDropsRemovedObjects(t *testing.T) {
	e := newTestEnv(t)
	e.synced(t, "u1", "a")
	p := e.listAll(t)[0]
	if sb, c := e.cachedIDs(); sb != 1 || c != 1 {
		t.Fatalf("cache holds %d sandboxes and %d containers, want 1 and 1", sb, c)
	}
	if err := e.rs.RemoveContainer(context.Background(), p.Containers[0].ID.ID); err != nil {
		t.Fatal(err)
	}
	p = e.listAll(t)[0]
	if len(p.Containers) != 0 {
		t.Errorf("a removed container is still listed: %+v", p.Containers)
	}
	if sb, c := e.cachedIDs(); sb != 1 || c != 0 {
		t.Errorf("cache holds %d sandboxes and %d containers, want 1 and 0", sb, c)
	}
	if err := e.rs.RemovePodSandbox(context.Background(), p.Sandboxes[0].ID.ID); err != nil {
		t.Fatal(err)
	}
	if pods := e.listAll(t); len(pods) != 0 {
		t.Errorf("a removed pod is still listed: %+v", pods)
	}
	if sb, c := e.cachedIDs(); sb != 0 || c != 0 {
		t.Errorf("cache holds %d sandboxes and %d containers after every object went, want none", sb, c)
	}
}

func TestGetPodsReturnsStructsTheCallerOwns(t *testing.T) {
	e := newTestEnv(t)
	e.synced(t, "u1", "a")
	first := e.listAll(t)[0]
	first.Name = "mutated"
	first.Containers[0].Name = "mutated"
	first.Containers[0].State = noderuntime.ContainerStateExited
	first.Sandboxes[0].State = noderuntime.ContainerStateExited
	again := e.listAll(t)[0]
	if again == first || again.Containers[0] == first.Containers[0] || again.Sandboxes[0] == first.Sandboxes[0] {
		t.Fatal("GetPods returned a struct an earlier call returned")
	}
	if again.Name != "web-u1" || again.Containers[0].Name != "a" ||
		again.Containers[0].State != noderuntime.ContainerStateRunning || again.Sandboxes[0].State != noderuntime.ContainerStateRunning {
		t.Errorf("a caller's change to an earlier answer shows in the next: %+v %+v %+v", again, again.Containers[0], again.Sandboxes[0])
	}
}

func TestGetPodsCacheFollowsTheRuntimeType(t *testing.T) {
	e := newTestEnv(t)
	e.synced(t, "u1", "a")
	if got := e.listAll(t)[0].Containers[0].ID.Type; got != defaultType {
		t.Fatalf("type before Version = %q, want %q", got, defaultType)
	}
	if _, err := e.m.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := e.m.Type()
	if want == defaultType {
		t.Fatalf("the fake's Version reports no runtime name")
	}
	p := e.listAll(t)[0]
	if p.Containers[0].ID.Type != want || p.Sandboxes[0].ID.Type != want {
		t.Errorf("after Version: IDs %v and %v, want type %q", p.Containers[0].ID, p.Sandboxes[0].ID, want)
	}
}

func TestGetPodsConcurrentCallsAgree(t *testing.T) {
	e := newTestEnv(t)
	for _, uid := range []string{"u1", "u2", "u3"} {
		e.synced(t, uid, "a", "b")
	}
	done := make(chan int, 8)
	for i := range 8 {
		go func() {
			pods, err := e.m.GetPods(context.Background(), i%2 == 0)
			n := 0
			if err == nil {
				for _, p := range pods {
					n += len(p.Containers)
				}
			}
			done <- n
		}()
	}
	for range 8 {
		if n := <-done; n != 6 {
			t.Errorf("a concurrent GetPods listed %d containers, want 6", n)
		}
	}
}

func TestGetPodsCacheFollowsAChangedImage(t *testing.T) {
	e := newTestEnv(t)
	pod := e.synced(t, "u1", "a")
	if got := e.listAll(t)[0].Containers[0].Image; got != testImage {
		t.Fatalf("first list: image %q, want %q", got, testImage)
	}
	// As cri-dockerd lists a container whose tag moved to another image:
	// the image ID in place of the name, same ID, state and creation time.
	const movedTo = "sha256:0123456789abcdef"
	id := e.containerIDOf(t, pod, "a")
	e.rs.Lock()
	c := e.rs.Containers[id]
	c.Image = &runtimeapi.ImageSpec{Image: movedTo}
	c.ImageRef = movedTo
	e.rs.Unlock()
	got := e.listAll(t)[0].Containers[0]
	if got.Image != movedTo || got.ImageID != movedTo {
		t.Errorf("after the listed image changed: image %q, image ID %q, want %q for both", got.Image, got.ImageID, movedTo)
	}
}
