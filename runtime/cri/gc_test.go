package cri

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// gcObject describes a fake sandbox (name "") or container.
type gcObject struct {
	id, sandbox, uid, name, instance string
	created                          int64
	running                          bool
	attempt                          uint32
}

func labelsFor(o gcObject) map[string]string {
	l := map[string]string{noderuntime.LabelPodUID: o.uid, noderuntime.LabelPodName: "p-" + o.uid,
		noderuntime.LabelPodNamespace: "ns", noderuntime.LabelInstance: o.instance}
	if o.name != "" {
		l[noderuntime.LabelContainerName] = o.name
	}
	return l
}

// seed replaces the fake's objects with objs.
func seed(e *testEnv, objs []gcObject) {
	var sandboxes []*fakeapi.FakePodSandbox
	var containers []*fakeapi.FakeContainer
	for _, o := range objs {
		if o.name == "" {
			state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
			if o.running {
				state = runtimeapi.PodSandboxState_SANDBOX_READY
			}
			sandboxes = append(sandboxes, &fakeapi.FakePodSandbox{PodSandboxStatus: runtimeapi.PodSandboxStatus{
				Id: o.id, State: state, CreatedAt: o.created, Labels: labelsFor(o),
				Metadata: &runtimeapi.PodSandboxMetadata{Name: "p-" + o.uid, Namespace: "ns", Uid: o.uid},
			}})
			continue
		}
		state := runtimeapi.ContainerState_CONTAINER_EXITED
		if o.running {
			state = runtimeapi.ContainerState_CONTAINER_RUNNING
		}
		containers = append(containers, &fakeapi.FakeContainer{SandboxID: o.sandbox, ContainerStatus: runtimeapi.ContainerStatus{
			Id: o.id, State: state, CreatedAt: o.created, Labels: labelsFor(o), Metadata: &runtimeapi.ContainerMetadata{Name: o.name, Attempt: o.attempt},
		}})
	}
	e.rs.SetFakeSandboxes(sandboxes)
	e.rs.SetFakeContainers(containers)
}

// remaining lists the IDs left in the fake, sorted.
func remaining(e *testEnv) []string {
	e.rs.Lock()
	defer e.rs.Unlock()
	var ids []string
	for id := range e.rs.Sandboxes {
		ids = append(ids, id)
	}
	for id := range e.rs.Containers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func TestGarbageCollect(t *testing.T) {
	existing := func(types.UID) bool { return false }
	removed := func(types.UID) bool { return true }
	cases := []struct {
		name      string
		objs      []gcObject
		isRemoved func(types.UID) bool
		want      []string
	}{
		{name: "the newest dead container of each name is kept",
			objs: []gcObject{
				{id: "s1", uid: "u1", instance: testInstance, created: 1, running: true},
				{id: "a1", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 2},
				{id: "a2", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 3},
				{id: "a3", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 4},
				{id: "a4", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 5, running: true},
				{id: "b1", sandbox: "s1", uid: "u1", name: "b", instance: testInstance, created: 2},
			},
			isRemoved: existing, want: []string{"a3", "a4", "b1", "s1"}},
		{name: "old unused sandboxes go but the newest stays",
			objs: []gcObject{
				{id: "s1", uid: "u1", instance: testInstance, created: 1},
				{id: "s2", uid: "u1", instance: testInstance, created: 2},
				{id: "s3", uid: "u1", instance: testInstance, created: 3},
				{id: "a1", sandbox: "s2", uid: "u1", name: "a", instance: testInstance, created: 4},
			},
			isRemoved: existing, want: []string{"a1", "s2", "s3"}},
		{name: "a removed pod loses every container and sandbox",
			objs: []gcObject{
				{id: "s1", uid: "u1", instance: testInstance, created: 1},
				{id: "s2", uid: "u1", instance: testInstance, created: 2},
				{id: "a1", sandbox: "s2", uid: "u1", name: "a", instance: testInstance, created: 3},
				{id: "a2", sandbox: "s2", uid: "u1", name: "a", instance: testInstance, created: 4},
			},
			isRemoved: removed, want: nil},
		{name: "a removed pod that still runs is left alone",
			objs: []gcObject{
				{id: "s1", uid: "u1", instance: testInstance, created: 1, running: true},
				{id: "a1", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 3},
				{id: "a2", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 4, running: true},
			},
			isRemoved: removed, want: []string{"a1", "a2", "s1"}},
		{name: "another instance's dead objects are never touched",
			objs: []gcObject{
				{id: "s9", uid: "u9", instance: "node-b", created: 1},
				{id: "x1", sandbox: "s9", uid: "u9", name: "x", instance: "node-b", created: 2},
				{id: "x2", sandbox: "s9", uid: "u9", name: "x", instance: "node-b", created: 3},
			},
			isRemoved: removed, want: []string{"s9", "x1", "x2"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			seed(e, tt.objs)
			if err := e.m.GarbageCollect(context.Background(), tt.isRemoved); err != nil {
				t.Fatalf("GarbageCollect: %v", err)
			}
			if got := remaining(e); !slices.Equal(got, tt.want) {
				t.Errorf("remaining = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGarbageCollectRemovesLogsOfRemovedPods(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", "a")
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatal(err)
	}
	if err := e.m.KillPod(context.Background(), pod, e.status(t, pod).ToPod(), nil); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(e.cfg.RootDir, "logs", "default_web-u1_u1")
	if _, err := os.Stat(logDir); err != nil {
		t.Fatalf("log dir missing before GC: %v", err)
	}
	if err := e.m.GarbageCollect(context.Background(), func(uid types.UID) bool { return uid == pod.UID }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logDir); !os.IsNotExist(err) {
		t.Errorf("log dir still there: %v", err)
	}
	if got := remaining(e); len(got) != 0 {
		t.Errorf("objects left: %v", got)
	}
}

func TestGarbageCollectReportsFailures(t *testing.T) {
	e := newTestEnv(t)
	seed(e, []gcObject{
		{id: "s1", uid: "u1", instance: testInstance, created: 1},
		{id: "a1", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 2},
	})
	e.rs.InjectError("RemoveContainer", errors.New("busy"))
	err := e.m.GarbageCollect(context.Background(), func(types.UID) bool { return true })
	if err == nil {
		t.Fatal("GarbageCollect hid a RemoveContainer failure")
	}
	if got := remaining(e); !slices.Equal(got, []string{"a1", "s1"}) {
		t.Errorf("sandbox removed before its containers: remaining %v", got)
	}
	if err := e.m.GarbageCollect(context.Background(), func(types.UID) bool { return true }); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := remaining(e); len(got) != 0 {
		t.Errorf("remaining after retry: %v", got)
	}
}

func TestDeleteAllUnusedContainersEmptiesTerminatedPodsThatStillExist(t *testing.T) {
	e := newTestEnv(t)
	seed(e, []gcObject{
		// u1: terminated (evicted, still in the API): everything goes.
		{id: "s1", uid: "u1", instance: testInstance, created: 1},
		{id: "s1b", uid: "u1", instance: testInstance, created: 2},
		{id: "a1", sandbox: "s1b", uid: "u1", name: "a", instance: testInstance, created: 3},
		{id: "a2", sandbox: "s1b", uid: "u1", name: "a", instance: testInstance, created: 4},
		// u2: alive: the usual policy keeps its newest dead container.
		{id: "s2", uid: "u2", instance: testInstance, created: 1, running: true},
		{id: "b1", sandbox: "s2", uid: "u2", name: "b", instance: testInstance, created: 2},
		{id: "b2", sandbox: "s2", uid: "u2", name: "b", instance: testInstance, created: 3},
		// u3: said to be terminated but something still runs: usual policy.
		{id: "s3", uid: "u3", instance: testInstance, created: 1, running: true},
		{id: "c1", sandbox: "s3", uid: "u3", name: "c", instance: testInstance, created: 2},
		{id: "c2", sandbox: "s3", uid: "u3", name: "c", instance: testInstance, created: 3, running: true},
		// u4: removed: gone as with GarbageCollect.
		{id: "s4", uid: "u4", instance: testInstance, created: 1},
		{id: "d1", sandbox: "s4", uid: "u4", name: "d", instance: testInstance, created: 2},
	})
	removed := func(uid types.UID) bool { return uid == "u4" }
	terminated := func(uid types.UID) bool { return uid == "u1" || uid == "u3" || uid == "u4" }
	// GarbageCollect alone keeps u1's newest dead container and sandbox.
	if err := e.m.GarbageCollect(context.Background(), removed); err != nil {
		t.Fatal(err)
	}
	if got, want := remaining(e), []string{"a2", "b2", "c1", "c2", "s1b", "s2", "s3"}; !slices.Equal(got, want) {
		t.Fatalf("after GarbageCollect remaining = %v, want %v", got, want)
	}
	if err := e.m.DeleteAllUnusedContainers(context.Background(), removed, terminated); err != nil {
		t.Fatalf("DeleteAllUnusedContainers: %v", err)
	}
	if got, want := remaining(e), []string{"b2", "c1", "c2", "s2", "s3"}; !slices.Equal(got, want) {
		t.Errorf("remaining = %v, want %v (the terminated pod's containers and sandboxes gone)", got, want)
	}
}

func TestGarbageCollectRemovesTheLogsOfRemovedContainers(t *testing.T) {
	e := newTestEnv(t)
	seed(e, []gcObject{
		{id: "s1", uid: "u1", instance: testInstance, created: 1, running: true},
		{id: "a0", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 2, attempt: 0},
		{id: "a1", sandbox: "s1", uid: "u1", name: "a", instance: testInstance, created: 3, attempt: 1},
	})
	dir := filepath.Join(e.cfg.RootDir, "logs", "ns_p-u1_u1", "a")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"0.log", "0.log.20260101-000000.gz", "1.log"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.m.GarbageCollect(context.Background(), func(types.UID) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if got := remaining(e); !slices.Equal(got, []string{"a1", "s1"}) {
		t.Fatalf("remaining = %v, want the newest dead container", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, en := range entries {
		left = append(left, en.Name())
	}
	if !slices.Equal(left, []string{"1.log"}) {
		t.Errorf("logs left %v, want only the kept container's 1.log", left)
	}
}
