package sim

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestListAnswersAreNewMessagesEachCall(t *testing.T) {
	e := newEnv(t, Config{})
	sb := e.sandbox(nil)
	e.start(sb, "a")
	e.start(sb, "b")
	first, err := e.r.ListContainers(e.ctx, nil)
	if err != nil || len(first) != 2 {
		t.Fatalf("ListContainers = %d, %v; want 2", len(first), err)
	}
	for _, c := range first {
		c.Id, c.State = "mutated", runtimeapi.ContainerState_CONTAINER_EXITED
		c.Metadata.Name, c.Image.Image = "mutated", "mutated"
	}
	again, err := e.r.ListContainers(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range again {
		if c.Id == "mutated" || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING ||
			c.GetMetadata().GetName() != []string{"a", "b"}[i] || c.GetImage().GetImage() == "mutated" {
			t.Errorf("container %d: a caller's change to an earlier answer shows in the next: %v", i, c)
		}
	}
	sbs, err := e.r.ListPodSandbox(e.ctx, nil)
	if err != nil || len(sbs) != 1 {
		t.Fatalf("ListPodSandbox = %d, %v; want 1", len(sbs), err)
	}
	sbs[0].Id, sbs[0].Metadata.Name = "mutated", "mutated"
	sbs, err = e.r.ListPodSandbox(e.ctx, nil)
	if err != nil || sbs[0].GetId() != sb || sbs[0].GetMetadata().GetName() != "web" {
		t.Errorf("a caller's change to an earlier sandbox answer shows in the next: %v, %v", sbs, err)
	}
}
