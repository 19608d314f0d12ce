package sim

import (
	"slices"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// podObjects runs a sandbox of pod uid with containers names, all carrying
// the pod UID label as the CRI manager sets it.
func (e *env) podObjects(uid string, names ...string) (string, []string) {
	e.t.Helper()
	sb, err := e.r.RunPodSandbox(e.ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p-" + uid, Namespace: "default", Uid: uid},
		Labels:   map[string]string{podUIDLabel: uid},
	}, "")
	if err != nil {
		e.t.Fatal(err)
	}
	var ids []string
	for _, n := range names {
		id, err := e.r.CreateContainer(e.ctx, sb, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: n},
			Image:    &runtimeapi.ImageSpec{Image: "busybox:1"},
			Labels:   map[string]string{podUIDLabel: uid, "container": n},
		}, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return sb, ids
}

func TestListsByPodUIDUseTheIndexAndMatchAScan(t *testing.T) {
	e := newEnv(t, Config{Images: []string{"busybox:1"}})
	sbA, ctrA := e.podObjects("a", "one", "two")
	sbB, _ := e.podObjects("b", "one")
	e.sandbox(nil) // no pod UID label: only full scans see it
	if err := e.r.RemoveContainer(e.ctx, ctrA[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.r.RemovePodSandbox(e.ctx, sbB); err != nil {
		t.Fatal(err)
	}
	if !e.r.sandboxesByPod.sameObjects(e.r.sandboxes, func(s *sandbox) map[string]string { return s.labels }) ||
		!e.r.containersByPod.sameObjects(e.r.containers, func(c *container) map[string]string { return c.labels }) {
		t.Fatal("the pod UID indexes disagree with the objects after creations and removals")
	}
	sbs, err := e.r.ListPodSandbox(e.ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{podUIDLabel: "a"}})
	if err != nil || len(sbs) != 1 || sbs[0].Id != sbA {
		t.Fatalf("sandboxes of pod a = %v, %v; want [%s]", sbs, err, sbA)
	}
	for uid, want := range map[string][]string{"a": {ctrA[1]}, "b": nil, "gone": nil} {
		cs, err := e.r.ListContainers(e.ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{podUIDLabel: uid}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.Id)
		}
		if !slices.Equal(got, want) {
			t.Errorf("containers of pod %s = %v, want %v", uid, got, want)
		}
	}
	if all, _ := e.r.ListPodSandbox(e.ctx, nil); len(all) != 2 {
		t.Errorf("%d sandboxes in a full list, want 2 (pod a's and the unlabelled one)", len(all))
	}
	cs, _ := e.r.ListContainers(e.ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{podUIDLabel: "a", "container": "one"}})
	if len(cs) != 0 {
		t.Errorf("pod a's removed container one is still listed: %v", cs)
	}
}
