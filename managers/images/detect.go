package images

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// record is what the GC knows of one image, by image ID.
type record struct {
	firstDetected time.Time
	lastUsed      time.Time // zero: never seen in use
	size          uint64
	pinned        bool
	image         *runtimeapi.Image
}

// candidate is an image that may be removed, with its record's times.
type candidate struct {
	id string
	record
}

// detect lists the images and every container of the runtime, updates
// the records (first detection at detectTime, last use now) and returns
// the IDs of the images in use: those of a container in any state and
// the sandbox image. The caller holds g.mu.
func (g *GC) detect(ctx context.Context, detectTime time.Time) (map[string]bool, error) {
	imgs, err := g.is.ListImages(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	ctrs, err := g.rs.ListContainers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	refs := map[string]bool{}
	for _, c := range ctrs {
		refs[c.GetImageRef()] = true
		refs[c.GetImage().GetImage()] = true
	}
	if s := g.sandboxImage(ctx); s != "" {
		refs[s] = true
	}
	delete(refs, "")
	inUse := map[string]bool{}
	now := g.clk.Now()
	seen := make(map[string]bool, len(imgs))
	for _, img := range imgs {
		id := img.GetId()
		seen[id] = true
		r, ok := g.records[id]
		if !ok {
			r = &record{firstDetected: detectTime}
			g.records[id] = r
		}
		if referenced(img, refs) {
			inUse[id] = true
			r.lastUsed = now
		}
		r.size, r.pinned, r.image = img.GetSize(), img.GetPinned(), img
	}
	for id := range g.records {
		if !seen[id] {
			delete(g.records, id)
		}
	}
	return inUse, nil
}

// referenced reports whether a container (or the sandbox setting) names
// img by ID, tag or digest.
func referenced(img *runtimeapi.Image, refs map[string]bool) bool {
	if refs[img.GetId()] {
		return true
	}
	for _, n := range append(append([]string{}, img.GetRepoTags()...), img.GetRepoDigests()...) {
		if refs[n] {
			return true
		}
	}
	return false
}

// sandboxImage is the configured sandbox image, else the one the runtime
// reports in its verbose status (containerd 1.x: info.config.sandboxImage),
// read once. Errors leave it unknown: a pinned sandbox image (containerd
// 2) is protected anyway.
func (g *GC) sandboxImage(ctx context.Context) string {
	if g.cfg.SandboxImage != "" || g.sandboxRead {
		return g.cfg.SandboxImage
	}
	resp, err := g.rs.Status(ctx, true)
	if err != nil {
		g.log.V(4).Info("cannot read the runtime's sandbox image", "err", err.Error())
		return ""
	}
	g.sandboxRead = true
	var conf struct {
		SandboxImage string `json:"sandboxImage"`
	}
	if raw := resp.GetInfo()["config"]; raw != "" && json.Unmarshal([]byte(raw), &conf) == nil {
		g.cfg.SandboxImage = conf.SandboxImage
	}
	return g.cfg.SandboxImage
}

// candidates are the images that may be removed at freeTime, least
// recently used first, then earliest detected: not in use, not pinned,
// accepted by the filter, detected at least MinAge ago and not used at or
// after freeTime. The caller holds g.mu.
func (g *GC) candidates(inUse map[string]bool, freeTime time.Time) []candidate {
	var out []candidate
	for id, r := range g.records {
		switch {
		case inUse[id]:
		case r.pinned:
			g.log.V(5).Info("image is pinned, skipping garbage collection", "imageID", id)
		case g.filter != nil && !g.filter(r.image):
		case !r.lastUsed.Before(freeTime) && !r.lastUsed.IsZero():
		case freeTime.Sub(r.firstDetected) < g.cfg.MinAge:
			g.log.V(5).Info("image is too new, skipping garbage collection", "imageID", id)
		default:
			out = append(out, candidate{id: id, record: *r})
		}
	}
	sortCandidates(out)
	return out
}
