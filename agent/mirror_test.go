package agent

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/podworkers"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/sources"
)

type fakeMirrors struct {
	mu      sync.Mutex
	created []string
	deleted []types.UID
}

func (f *fakeMirrors) CreateMirrorPod(_ context.Context, p *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, p.Name)
	return nil
}

func (f *fakeMirrors) DeleteMirrorPod(_ context.Context, _ string, uid *types.UID) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, *uid)
	return true, nil
}

func (f *fakeMirrors) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.created), len(f.deleted)
}

func hashedStatic(uid, hash string) *corev1.Pod {
	p := staticPod(uid, "web")
	p.Annotations[sources.AnnotationHash] = hash
	return p
}

func mirrorPod(uid, hash string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: "web", Namespace: "default",
		Annotations: map[string]string{sources.AnnotationMirror: hash, sources.AnnotationSource: sources.APIServerSource}}}
}

func TestSyncerKeepsTheMirrorPodUpToDate(t *testing.T) {
	now := metav1.NewTime(t0)
	deleting := mirrorPod("m-old", "h1")
	deleting.DeletionTimestamp = &now
	cases := []struct {
		name                    string
		mirror                  *corev1.Pod
		wantCreated, wantDelete int
	}{
		{"a missing mirror is created", nil, 1, 0},
		{"an up-to-date mirror is left alone", mirrorPod("m", "h1"), 0, 0},
		{"a mirror of an older manifest is replaced", mirrorPod("m", "h0"), 1, 1},
		{"a mirror being deleted is recreated only once it is gone", deleting, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mirrors := &fakeMirrors{}
			rt := &scriptedRuntime{result: &noderuntime.SyncResult{}}
			s, _, _ := newTestSyncer(t, rt)
			s.mirrors = mirrors
			pod := hashedStatic("s", "h1")
			pod.Spec.Containers = []corev1.Container{{Name: "a"}}
			if _, err := s.SyncPod(t.Context(), podworkers.SyncPodSync, pod, tc.mirror, &noderuntime.PodStatus{ID: pod.UID}); err != nil {
				t.Fatal(err)
			}
			if c, d := mirrors.counts(); c != tc.wantCreated || d != tc.wantDelete {
				t.Fatalf("created %d deleted %d, want %d and %d", c, d, tc.wantCreated, tc.wantDelete)
			}
		})
	}
}

func TestMirrorPodsNeverRunAndTheirRemovalResyncsTheStaticPod(t *testing.T) {
	lt := newLoopTest(t, Config{})
	mirrors := &fakeMirrors{}
	lt.agent.mirrors = mirrors
	lt.start()
	static := hashedStatic("s", "h1")
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{static}}
	if c := lt.nextCall(); c.Pod.UID != "s" {
		t.Fatalf("call for %v, want the static pod", c.Pod.UID)
	}
	mirror := mirrorPod("m", "h1")
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Source: sources.APIServerSource, Pods: []*corev1.Pod{mirror}}
	if c := lt.nextCall(); c.Pod.UID != "s" || c.MirrorPod == nil || c.MirrorPod.UID != "m" {
		t.Fatalf("call = %v mirror %v, want a sync of the static pod with its mirror", c.Pod.UID, c.MirrorPod)
	}
	if uid, _, _, ok := lt.agent.registry.TranslateUID("s"); !ok || uid != "m" {
		t.Fatalf("TranslateUID(s) = %s %v, want the mirror's UID", uid, ok)
	}
	lt.config.updates <- sources.PodUpdate{Op: sources.REMOVE, Source: sources.APIServerSource, Pods: []*corev1.Pod{mirror}}
	if c := lt.nextCall(); c.UpdateType != podworkers.SyncPodSync || c.Pod.UID != "s" || c.MirrorPod != nil {
		t.Fatalf("call = %s %v mirror %v, want a sync of the static pod without a mirror", c.UpdateType, c.Pod.UID, c.MirrorPod)
	}
	if len(lt.agent.GetPods()) != 1 {
		t.Fatal("a mirror pod must not be listed as a pod of the agent")
	}
}

func TestHousekeepingDeletesMirrorsOfGoneStaticPods(t *testing.T) {
	lt := newLoopTest(t, Config{})
	mirrors := &fakeMirrors{}
	lt.agent.mirrors = mirrors
	lt.config.seen.Store(true)
	lt.start()
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Source: sources.APIServerSource, Pods: []*corev1.Pod{mirrorPod("m", "h1")}}
	lt.noCall()
	lt.clk.Step(2 * time.Second)
	lt.waitFor("the orphaned mirror to be deleted", func() bool { _, d := mirrors.counts(); return d == 1 })
}
