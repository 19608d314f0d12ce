package cri

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// listing is one ListPodSandbox and ListContainers answer.
type listing struct {
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
}

// podLabels are the labels of an object of the pod numbered i.
func podLabels(i int) map[string]string {
	return map[string]string{
		noderuntime.LabelPodUID:       fmt.Sprintf("uid-%d", i),
		noderuntime.LabelPodName:      fmt.Sprintf("pod-%d", i),
		noderuntime.LabelPodNamespace: "ns",
	}
}

// randomListing lists pods pods in random order: each with zero to two
// sandboxes and zero to three containers (so some containers outlive their
// sandboxes), creation times drawn from a small range so that ties occur.
func randomListing(r *rand.Rand, pods int) listing {
	var l listing
	for i := range pods {
		for j := range r.IntN(3) {
			l.sandboxes = append(l.sandboxes, &runtimeapi.PodSandbox{
				Id: fmt.Sprintf("sb-%d-%d", i, j), State: runtimeapi.PodSandboxState(r.IntN(2)),
				CreatedAt: 1 + r.Int64N(20), Labels: podLabels(i),
			})
		}
		for j := range r.IntN(4) {
			l.containers = append(l.containers, &runtimeapi.Container{
				Id: fmt.Sprintf("ct-%d-%d", i, j), State: runtimeapi.ContainerState(r.IntN(4)),
				CreatedAt: 1 + r.Int64N(20), Labels: podLabels(i),
				Metadata: &runtimeapi.ContainerMetadata{Name: fmt.Sprintf("c%d", j)},
				Image:    &runtimeapi.ImageSpec{Image: "img"},
			})
		}
	}
	r.Shuffle(len(l.sandboxes), func(a, b int) { l.sandboxes[a], l.sandboxes[b] = l.sandboxes[b], l.sandboxes[a] })
	r.Shuffle(len(l.containers), func(a, b int) { l.containers[a], l.containers[b] = l.containers[b], l.containers[a] })
	return l
}

// appendGrouped is the answer GetPods promises, built the plain way: pods
// in order of first sight, each object appended to its pod, then pods
// newest first (ties by UID) and each pod's objects newest first, ties in
// list order.
func appendGrouped(l listing, typ string) []*noderuntime.Pod {
	byUID := map[types.UID]*noderuntime.Pod{}
	newest := map[types.UID]int64{}
	var order []*noderuntime.Pod
	podOf := func(labels map[string]string, createdAt int64) *noderuntime.Pod {
		uid := types.UID(labels[noderuntime.LabelPodUID])
		p, ok := byUID[uid]
		if !ok {
			p = &noderuntime.Pod{ID: uid, Name: labels[noderuntime.LabelPodName], Namespace: labels[noderuntime.LabelPodNamespace]}
			byUID[uid] = p
			order = append(order, p)
		}
		newest[uid] = max(newest[uid], createdAt)
		return p
	}
	for _, s := range l.sandboxes {
		p := podOf(s.Labels, s.CreatedAt)
		p.Sandboxes = append(p.Sandboxes, sandboxToContainer(s, typ))
	}
	for _, c := range l.containers {
		p := podOf(c.Labels, c.CreatedAt)
		p.Containers = append(p.Containers, listedToContainer(c, typ))
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if newest[a.ID] != newest[b.ID] {
			return newest[a.ID] > newest[b.ID]
		}
		return a.ID < b.ID
	})
	for _, p := range order {
		for _, cs := range [][]*noderuntime.Container{p.Sandboxes, p.Containers} {
			sort.SliceStable(cs, func(i, j int) bool { return cs[i].CreatedAt.After(cs[j].CreatedAt) })
		}
	}
	return order
}

// groupWithSlab groups a listing as listCache.group does, but with room for
// only room objects in the grouper's slab of Container structs.
func groupWithSlab(c *listCache, l listing, typ string, room int) []*noderuntime.Pod {
	g := newPodGrouper(len(l.sandboxes), len(l.containers))
	g.objs = make([]noderuntime.Container, 0, room)
	c.begin()
	defer c.end()
	for _, s := range l.sandboxes {
		g.add(c.lookup(c.sandboxes, s.GetId(), sandboxKey(s, typ), func() *listedEntry { return sandboxEntry(s, typ) }), true)
	}
	for _, ct := range l.containers {
		g.add(c.lookup(c.containers, ct.GetId(), containerKey(ct, typ), func() *listedEntry { return containerEntry(ct, typ) }), false)
	}
	g.fill()
	return g.sorted()
}

// checkOwnStructs fails the test when two places of the answers share a Pod
// or Container struct.
func checkOwnStructs(t *testing.T, answers ...[]*noderuntime.Pod) {
	t.Helper()
	seen := map[any]bool{}
	for _, pods := range answers {
		for _, p := range pods {
			if seen[p] {
				t.Fatalf("pod %s shares its Pod struct", p.ID)
			}
			seen[p] = true
			for _, c := range append(append([]*noderuntime.Container(nil), p.Sandboxes...), p.Containers...) {
				if seen[c] {
					t.Fatalf("object %s of pod %s shares its Container struct", c.ID.ID, p.ID)
				}
				seen[c] = true
			}
		}
	}
}

func TestGroupGivesThePlainAppendAnswer(t *testing.T) {
	const typ = "containerd"
	r := rand.New(rand.NewPCG(18, 1))
	for round := range 50 {
		l := randomListing(r, 1+r.IntN(12))
		want := appendGrouped(l, typ)
		var c listCache
		first := c.group(l.sandboxes, l.containers, typ).sorted()
		again := c.group(l.sandboxes, l.containers, typ).sorted() // from the cache
		if !reflect.DeepEqual(first, want) || !reflect.DeepEqual(again, want) {
			t.Fatalf("round %d: group answered\n%s\nthen\n%s\nwant\n%s", round, dump(first), dump(again), dump(want))
		}
		checkOwnStructs(t, first, again)
	}
}

func TestGroupWithAFullSlabStillCopiesEveryObject(t *testing.T) {
	const typ = "containerd"
	r := rand.New(rand.NewPCG(18, 2))
	for round := range 20 {
		l := randomListing(r, 1+r.IntN(12))
		want := appendGrouped(l, typ)
		for _, room := range []int{0, (len(l.sandboxes) + len(l.containers)) / 2} {
			var c listCache
			got := groupWithSlab(&c, l, typ, room)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, slab room %d: group answered\n%s\nwant\n%s", round, room, dump(got), dump(want))
			}
			checkOwnStructs(t, got, groupWithSlab(&c, l, typ, room))
		}
	}
}

func TestGroupedSlicesDoNotAlias(t *testing.T) {
	const typ = "containerd"
	r := rand.New(rand.NewPCG(18, 3))
	l := randomListing(r, 30)
	var c listCache
	pods := c.group(l.sandboxes, l.containers, typ).sorted()
	want := appendGrouped(l, typ)
	intruder := &noderuntime.Container{ID: noderuntime.ContainerID{Type: typ, ID: "intruder"}}
	// Append to both slices of each pod in turn, as a caller may, and go
	// back to the slices as they were: those, and every other pod's, must
	// still hold what they held.
	for _, p := range pods {
		sandboxes, containers := p.Sandboxes, p.Containers
		p.Sandboxes = append(p.Sandboxes, intruder)
		p.Containers = append(p.Containers, intruder)
		p.Sandboxes, p.Containers = sandboxes, containers
		if !reflect.DeepEqual(pods, want) {
			t.Fatalf("appending to pod %s's slices changed the answer to\n%s\nwant\n%s", p.ID, dump(pods), dump(want))
		}
	}
}

func TestGroupAllocationsDoNotGrowWithPods(t *testing.T) {
	const typ = "containerd"
	// An unchanged relist: every object in the cache, one sandbox and one
	// container per pod, as BenchmarkRelistUnchanged lists them.
	allocs := func(pods int) float64 {
		var l listing
		for i := range pods {
			l.sandboxes = append(l.sandboxes, &runtimeapi.PodSandbox{Id: fmt.Sprintf("sb-%d", i), CreatedAt: int64(1 + i), Labels: podLabels(i)})
			l.containers = append(l.containers, &runtimeapi.Container{
				Id: fmt.Sprintf("ct-%d", i), State: runtimeapi.ContainerState_CONTAINER_RUNNING, CreatedAt: int64(2 + i),
				Labels: podLabels(i), Metadata: &runtimeapi.ContainerMetadata{Name: "c"},
			})
		}
		var c listCache
		c.group(l.sandboxes, l.containers, typ).sorted() // fill the cache
		return testing.AllocsPerRun(20, func() { c.group(l.sandboxes, l.containers, typ).sorted() })
	}
	// The answer's slabs, the UID map's tables and the result: a few dozen
	// at most, where a slice per pod and kind would be thousands.
	const bound = 40
	small, large := allocs(10), allocs(1000)
	t.Logf("allocations per call: %.0f with 10 pods, %.0f with 1,000", small, large)
	if small > bound || large > bound {
		t.Errorf("group allocates %.0f times with 10 pods and %.0f with 1,000, want at most %d for any number of pods", small, large, bound)
	}
}

// dump formats pods for a failure message.
func dump(pods []*noderuntime.Pod) string {
	s := ""
	for _, p := range pods {
		s += fmt.Sprintf("%s:", p.ID)
		for _, c := range p.Sandboxes {
			s += fmt.Sprintf(" sb %s@%d", c.ID.ID, c.CreatedAt.UnixNano())
		}
		for _, c := range p.Containers {
			s += fmt.Sprintf(" ct %s@%d", c.ID.ID, c.CreatedAt.UnixNano())
		}
		s += "\n"
	}
	return s
}
