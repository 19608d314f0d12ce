package stats

import (
	"cmp"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// DefaultVolumeStatsAggPeriod is how long a volume's measured usage is
// reused, the kubelet's volumeStatsAggPeriod.
const DefaultVolumeStatsAggPeriod = time.Minute

// VolumeLister gives the stats provider the pod volumes whose usage it
// reports in each pod's "volume" entries. managers/volumes implements it.
// Implementations must be safe for concurrent use.
type VolumeLister interface {
	// PodVolumeDirs returns, by volume name, the directory each of the
	// pod's set-up volumes lives in, for the volumes that report usage
	// as the kubelet's volume plugins do (emptyDir, configMap, secret,
	// downwardAPI, projected; not hostPath, whose plugin reports none).
	// The caller owns the map.
	PodVolumeDirs(uid types.UID) map[string]string
}

// volumeCache keeps each pod volume's last measurement, so that a volume
// is walked at most once per period however often the summary is read, as
// the kubelet's per-pod volume stats calculators measure once per
// volumeStatsAggPeriod.
type volumeCache struct {
	mu      sync.Mutex
	lister  VolumeLister
	entries map[volumeKey]statsapi.FsStats
}

type volumeKey struct {
	uid  types.UID
	name string
}

// SetVolumes gives the provider the volumes to report in the pods' volume
// stats. Until it is called, or with nil, pods have no volume entries.
func (p *CRI) SetVolumes(l VolumeLister) {
	p.volumes.mu.Lock()
	defer p.volumes.mu.Unlock()
	p.volumes.lister = l
}

// volumeStats returns the pod's volume entries, as the kubelet's
// (ephemeral volumes: name and fsStats): used bytes and inodes as du
// counts them under the volume's directory, capacity, available bytes and
// inodes of the filesystem holding it (statfs), sorted by name. A
// measurement younger than VolumeStatsAggPeriod is reused. seen collects
// the keys measured in this round.
func (p *CRI) volumeStats(uid string, seen map[volumeKey]bool, now time.Time) []statsapi.VolumeStats {
	c := &p.volumes
	c.mu.Lock()
	l := c.lister
	c.mu.Unlock()
	if l == nil || uid == "" {
		return nil
	}
	dirs := l.PodVolumeDirs(types.UID(uid))
	out := make([]statsapi.VolumeStats, 0, len(dirs))
	for name, dir := range dirs {
		k := volumeKey{types.UID(uid), name}
		seen[k] = true
		c.mu.Lock()
		fs, ok := c.entries[k]
		c.mu.Unlock()
		if !ok || now.Sub(fs.Time.Time) >= p.cfg.VolumeStatsAggPeriod {
			m, err := measureVolume(dir, now)
			if err != nil {
				p.log.V(4).Info("cannot measure a pod volume", "podUID", uid, "volume", name, "dir", dir, "err", err.Error())
				continue
			}
			fs = *m
			c.mu.Lock()
			c.entries[k] = fs
			c.mu.Unlock()
		}
		out = append(out, statsapi.VolumeStats{Name: name, FsStats: fs})
	}
	slices.SortFunc(out, func(a, b statsapi.VolumeStats) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// pruneVolumes forgets the measurements of volumes not seen in a round.
func (p *CRI) pruneVolumes(seen map[volumeKey]bool) {
	c := &p.volumes
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if !seen[k] {
			delete(c.entries, k)
		}
	}
}

// measureVolume is the kubelet's MetricsDu: du's bytes and inodes under
// dir, and statfs of its filesystem.
func measureVolume(dir string, now time.Time) (*statsapi.FsStats, error) {
	fs, err := fsStats(dir, now)
	if err != nil {
		return nil, err
	}
	used, inodes, err := diskUsage(dir)
	if err != nil {
		return nil, err
	}
	fs.UsedBytes, fs.InodesUsed = ptr(used), ptr(inodes)
	fs.Time = metav1.NewTime(now)
	return fs, nil
}
