//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/images"
)

// TestImageGCRemovesUnusedImagesOldestFirst imports five copies of the
// busybox archive under unique names (distinct image IDs): one never used,
// one used by a pod that then goes away, one used by a running pod, one
// the GC's sandbox image and one pinned. A GC on the shared containerd,
// limited by a filter to this test's images and with thresholds the real
// image filesystem crosses (high 2%, low 1%), must remove the never used
// then the formerly used image, in that order, keep the other three, and
// record FreeDiskSpaceFailed (it cannot reach 1%).
func TestImageGCRemovesUnusedImagesOldestFirst(t *testing.T) {
	h := newAgentHarness(t)
	prefix := fmt.Sprintf("localhost/nodekit-e2e-imagegc-%d", time.Now().UnixNano())
	name := func(n string) string { return prefix + "/" + n + ":1" }
	names := map[string]string{}
	for _, n := range []string{"never", "before", "inuse", "sandbox", "pinned"} {
		names[n] = name(n)
	}
	importCopies(t, h.env, names)
	ctrCmd(t, h.env, "images", "label", names["pinned"], "io.cri-containerd.pinned=pinned")
	waitImage(t, h.env, names["pinned"], func(img *runtimeapi.Image) bool { return img.Pinned })

	h.start()
	h.writeManifest("gc-before.yaml", sleeperPod(names["before"], "gc-before"))
	h.writeManifest("gc-inuse.yaml", sleeperPod(names["inuse"], "gc-inuse"))
	running := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }
	h.waitPod("gc-before", 2*time.Minute, "running", running)
	h.waitPod("gc-inuse", 2*time.Minute, "running", running)

	is := &recordingImages{ImageManagerService: h.env.images(t)}
	ev := &eventLog{}
	minAge := 5 * time.Second
	gc := images.NewGC(is, h.env.runtime(t), images.CRIImageFs{Runtime: h.env.images(t)}, ev, clock.RealClock{}, nil, logr.Discard(),
		images.Config{HighThresholdPercent: 2, LowThresholdPercent: 1, MinAge: minAge, SandboxImage: names["sandbox"], NodeName: h.node},
		func(img *runtimeapi.Image) bool { return hasPrefixTag(img, prefix+"/") })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// First pass: every image was just detected, younger than MinAge, and
	// "before" is in use: nothing goes.
	if err := gc.GarbageCollect(ctx); !errors.Is(err, images.ErrNotEnoughFreed) {
		t.Fatalf("first pass: %v, want ErrNotEnoughFreed (nothing old enough)", err)
	}
	if got := is.removedNames(); len(got) != 0 {
		t.Fatalf("first pass removed %v", got)
	}
	firstPass := time.Now()

	// The "before" pod goes away, with its containers.
	if err := os.Remove(filepath.Join(h.manifests, "gc-before.yaml")); err != nil {
		t.Fatal(err)
	}
	removeSandboxes(t, h, "gc-before-"+h.node)
	waitNoContainer(t, h.env, names["before"], func() { removeSandboxes(t, h, "gc-before-"+h.node) })

	for deadline := time.Now().Add(2 * time.Minute); len(is.removedNames()) < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("the GC removed only %v", is.removedNames())
		}
		if time.Since(firstPass) > minAge {
			if err := gc.GarbageCollect(ctx); !errors.Is(err, images.ErrNotEnoughFreed) {
				t.Fatalf("GarbageCollect: %v, want ErrNotEnoughFreed", err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got, want := is.removedNames(), []string{names["never"], names["before"]}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("removed %v, want %v (never used first, then least recently used)", got, want)
	}
	for _, n := range []string{"inuse", "sandbox", "pinned"} {
		if !imagePresent(t, h.env, names[n]) {
			t.Errorf("image %s (%s) was removed", names[n], n)
		}
	}
	for _, n := range []string{"never", "before"} {
		if imagePresent(t, h.env, names[n]) {
			t.Errorf("image %s (%s) is still present", names[n], n)
		}
	}
	if !imagePresent(t, h.env, h.env.Image) {
		t.Errorf("the shared image %s is gone", h.env.Image)
	}
	if !ev.has(images.ReasonFreeDiskSpaceFailed, "Failed to garbage collect required amount of images") {
		t.Errorf("no FreeDiskSpaceFailed event; events: %v", ev.all())
	}
	t.Logf("removed in order: %v; events: %d", is.removedNames(), len(ev.all()))
}

// recordingImages passes every call to the runtime and records the images
// removed (by their first tag), in order.
type recordingImages struct {
	criapi.ImageManagerService
	mu      sync.Mutex
	removed []string
}

func (r *recordingImages) RemoveImage(ctx context.Context, spec *runtimeapi.ImageSpec) error {
	st, _ := r.ImageStatus(ctx, spec, false)
	if err := r.ImageManagerService.RemoveImage(ctx, spec); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if tags := st.GetImage().GetRepoTags(); len(tags) > 0 {
		r.removed = append(r.removed, tags[0])
	} else {
		r.removed = append(r.removed, spec.Image)
	}
	return nil
}

func (r *recordingImages) removedNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.removed...)
}
