package stats

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fakeVolumes is a VolumeLister over a map.
type fakeVolumes struct {
	mu   sync.Mutex
	dirs map[types.UID]map[string]string
}

func (f *fakeVolumes) PodVolumeDirs(uid types.UID) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for k, v := range f.dirs[uid] {
		out[k] = v
	}
	return out
}

// Each pod lists its volumes with du's usage and the filesystem's
// capacity, the volumes count in the pod's ephemeral storage, a
// measurement is reused for VolumeStatsAggPeriod and then taken again, and
// only_cpu_and_memory leaves the volumes out.
func TestPodVolumeStatsMeasureTheVolumeDirectories(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	podFixture(f)
	base := t.TempDir()
	data, cfg := filepath.Join(base, "data"), filepath.Join(base, "config")
	h.write(data, "blob", string(make([]byte, 64<<10)))
	h.write(cfg, "..data/key", "value")
	vols := &fakeVolumes{dirs: map[types.UID]map[string]string{"uid1": {"data": data, "config": cfg}}}
	p := f.provider(h, Config{InstanceID: "me", VolumeStatsAggPeriod: time.Minute})
	p.SetVolumes(vols)

	pod := onlyPod(t, p, false)
	if len(pod.VolumeStats) != 2 || pod.VolumeStats[0].Name != "config" || pod.VolumeStats[1].Name != "data" {
		t.Fatalf("volume stats %+v, want config and data", pod.VolumeStats)
	}
	cfgStats, dataStats := pod.VolumeStats[0].FsStats, pod.VolumeStats[1].FsStats
	if used := val(t, "data used", dataStats.UsedBytes); used < 64<<10 {
		t.Errorf("data usedBytes %d, want at least the 64 KiB file", used)
	}
	if val(t, "data inodes used", dataStats.InodesUsed) != 2 || val(t, "config inodes used", cfgStats.InodesUsed) != 3 {
		t.Errorf("inodes used: data %d config %d, want 2 (dir, file) and 3 (dir, ..data, key)", *dataStats.InodesUsed, *cfgStats.InodesUsed)
	}
	for name, fs := range map[string]statsapi.FsStats{"data": dataStats, "config": cfgStats} {
		if val(t, name+" capacity", fs.CapacityBytes) == 0 || fs.AvailableBytes == nil || val(t, name+" inodes", fs.Inodes) == 0 ||
			fs.InodesFree == nil || !fs.Time.Time.Equal(f.clk.Now()) {
			t.Errorf("%s fs stats %+v, want the filesystem's capacity, available, inodes at now", name, fs)
		}
	}
	var containers uint64
	for _, c := range pod.Containers {
		for _, fs := range []*statsapi.FsStats{c.Rootfs, c.Logs} {
			if fs != nil && fs.UsedBytes != nil {
				containers += *fs.UsedBytes
			}
		}
	}
	if want := containers + *dataStats.UsedBytes + *cfgStats.UsedBytes; val(t, "ephemeral", pod.EphemeralStorage.UsedBytes) != want {
		t.Errorf("ephemeral storage %d, want rootfs + logs + volumes = %d", *pod.EphemeralStorage.UsedBytes, want)
	}

	// Within the period the measurement is reused; after it, taken again.
	h.write(data, "more", string(make([]byte, 64<<10)))
	f.clk.Step(30 * time.Second)
	if got := volumeNamed(t, onlyPod(t, p, false), "data"); *got.UsedBytes != *dataStats.UsedBytes || !got.Time.Time.Equal(dataStats.Time.Time) {
		t.Errorf("data measured again within the period: %d at %v", *got.UsedBytes, got.Time)
	}
	f.clk.Step(30 * time.Second)
	if got := volumeNamed(t, onlyPod(t, p, false), "data"); *got.UsedBytes < *dataStats.UsedBytes+64<<10 || !got.Time.Time.Equal(f.clk.Now()) {
		t.Errorf("data after the period: %d at %v, want the new file counted at now", *got.UsedBytes, got.Time)
	}

	if pod := onlyPod(t, p, true); pod.VolumeStats != nil {
		t.Errorf("only cpu and memory: volume stats %+v", pod.VolumeStats)
	}

	// A volume that goes away is forgotten; one whose directory cannot
	// be read is left out.
	vols.mu.Lock()
	vols.dirs["uid1"] = map[string]string{"gone": filepath.Join(base, "missing")}
	vols.mu.Unlock()
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	if pod := onlyPod(t, p, false); len(pod.VolumeStats) != 0 {
		t.Errorf("volume stats %+v, want none", pod.VolumeStats)
	}
	p.volumes.mu.Lock()
	defer p.volumes.mu.Unlock()
	if len(p.volumes.entries) != 0 {
		t.Errorf("cached measurements of volumes no longer listed: %v", p.volumes.entries)
	}
}

// Without a VolumeLister pods have no volume entries.
func TestPodVolumeStatsWithoutAListerAreEmpty(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	f := newFakeRuntime()
	podFixture(f)
	if pod := onlyPod(t, f.provider(h, Config{InstanceID: "me"}), false); pod.VolumeStats != nil {
		t.Errorf("volume stats %+v, want none", pod.VolumeStats)
	}
}

func onlyPod(t *testing.T, p *CRI, only bool) statsapi.PodStats {
	t.Helper()
	pods, err := p.ListPodStats(context.Background(), only)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 {
		t.Fatalf("pods %+v, want one", pods)
	}
	return pods[0]
}

func volumeNamed(t *testing.T, pod statsapi.PodStats, name string) statsapi.FsStats {
	t.Helper()
	for _, v := range pod.VolumeStats {
		if v.Name == name {
			return v.FsStats
		}
	}
	t.Fatalf("no volume %q in %+v", name, pod.VolumeStats)
	return statsapi.FsStats{}
}
