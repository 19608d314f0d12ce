package eviction

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func pod(name string, prio int32, memRequest string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
		Spec: corev1.PodSpec{Priority: &prio, Containers: []corev1.Container{{Name: "main"}}}}
	if memRequest != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse(memRequest), corev1.ResourceEphemeralStorage: resource.MustParse(memRequest)}
	}
	return p
}

func podStats(name string, workingSet, disk, inodes, procs uint64) statsapi.PodStats {
	return statsapi.PodStats{
		PodRef:           statsapi.PodReference{Name: name, UID: name},
		Memory:           &statsapi.MemoryStats{WorkingSetBytes: &workingSet},
		EphemeralStorage: &statsapi.FsStats{UsedBytes: &disk, InodesUsed: &inodes},
		ProcessStats:     &statsapi.ProcessStats{ProcessCount: &procs},
		Containers: []statsapi.ContainerStats{{Name: "main", Memory: &statsapi.MemoryStats{WorkingSetBytes: &workingSet},
			Rootfs: &statsapi.FsStats{UsedBytes: &disk}}},
	}
}

func names(pods []*corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

func TestKubeletRanker(t *testing.T) {
	t.Parallel()
	const m = 1 << 20
	pods := []*corev1.Pod{
		pod("guaranteed-within", 0, "100Mi"), // uses 50Mi of 100Mi requested
		pod("besteffort-small", 0, ""),       // 10Mi over its (zero) request
		pod("burstable-over", 0, "20Mi"),     // 60Mi, 40Mi over
		pod("high-prio-over", 1000, "10Mi"),  // 500Mi, 490Mi over, but higher priority
		pod("besteffort-big", 0, ""),         // 30Mi over
		pod("no-stats", 0, ""),
	}
	stats := map[types.UID]statsapi.PodStats{
		"guaranteed-within": podStats("guaranteed-within", 50*m, 50*m, 5, 1),
		"besteffort-small":  podStats("besteffort-small", 10*m, 10*m, 50, 9),
		"burstable-over":    podStats("burstable-over", 60*m, 60*m, 10, 3),
		"high-prio-over":    podStats("high-prio-over", 500*m, 500*m, 500, 100),
		"besteffort-big":    podStats("besteffort-big", 30*m, 30*m, 20, 2),
	}
	for _, tc := range []struct {
		signal Signal
		want   string
	}{
		{SignalMemoryAvailable, "no-stats,burstable-over,besteffort-big,besteffort-small,high-prio-over,guaranteed-within"},
		{SignalNodeFsAvailable, "no-stats,burstable-over,besteffort-big,besteffort-small,high-prio-over,guaranteed-within"},
		{SignalImageFsInodesFree, "no-stats,besteffort-small,besteffort-big,burstable-over,guaranteed-within,high-prio-over"},
		{SignalPIDAvailable, "besteffort-small,burstable-over,besteffort-big,guaranteed-within,no-stats,high-prio-over"},
	} {
		t.Run(string(tc.signal), func(t *testing.T) {
			got := KubeletRanker{}.Rank(tc.signal, pods, stats)
			if names(got) != tc.want {
				t.Fatalf("Rank(%s) = %s, want %s", tc.signal, names(got), tc.want)
			}
			if pods[0].Name != "guaranteed-within" {
				t.Fatal("Rank reordered its input")
			}
		})
	}
}

func TestIsCritical(t *testing.T) {
	t.Parallel()
	static := pod("s", 0, "")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	mirror := pod("m", 0, "")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	api := pod("a", 0, "")
	api.Annotations = map[string]string{"kubernetes.io/config.source": "api"}
	for p, want := range map[*corev1.Pod]bool{static: true, mirror: true, pod("c", SystemCriticalPriority, ""): true, api: false, pod("p", 0, ""): false} {
		if IsCritical(p) != want {
			t.Errorf("IsCritical(%s) = %v, want %v", p.Name, !want, want)
		}
	}
}

func TestMessageNamesTheResourceAndTheContainersOverRequest(t *testing.T) {
	t.Parallel()
	p := pod("p", 0, "20Mi")
	s := podStats("p", 60<<20, 0, 0, 0)
	if got, want := Message(SignalMemoryAvailable, p, &s), "The node was low on resource: memory. Container main was using 60Mi, request is 20Mi, has larger consumption of memory. "; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if got, want := Message(SignalPIDAvailable, p, &s), "The node was low on resource: pids. "; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
}

func TestObserveComputesTheKubeletsSignals(t *testing.T) {
	t.Parallel()
	u := func(v uint64) *uint64 { return &v }
	i := func(v int64) *int64 { return &v }
	obs := Observe(&statsapi.NodeStats{
		Memory:  &statsapi.MemoryStats{AvailableBytes: u(300), WorkingSetBytes: u(700)},
		Fs:      &statsapi.FsStats{AvailableBytes: u(10), CapacityBytes: u(100), InodesFree: u(5), Inodes: u(50)},
		Runtime: &statsapi.RuntimeStats{ImageFs: &statsapi.FsStats{AvailableBytes: u(20), CapacityBytes: u(200)}},
		Rlimit:  &statsapi.RlimitStats{MaxPID: i(1000), NumOfRunningProcesses: i(250)},
	})
	want := Observations{
		SignalMemoryAvailable: {300, 1000}, SignalNodeFsAvailable: {10, 100}, SignalNodeFsInodesFree: {5, 50},
		SignalImageFsAvailable: {20, 200}, SignalPIDAvailable: {750, 1000},
	}
	if len(obs) != len(want) {
		t.Fatalf("Observe = %v, want %v", obs, want)
	}
	for s, w := range want {
		if obs[s] != w {
			t.Errorf("%s = %+v, want %+v", s, obs[s], w)
		}
	}
	if len(Observe(nil)) != 0 {
		t.Error("no stats gave observations")
	}
}

func TestKubeletRankerCountsLocalVolumesForDisk(t *testing.T) {
	t.Parallel()
	const m = 1 << 20
	withVolume := func(name, volume string, medium corev1.StorageMedium) *corev1.Pod {
		p := pod(name, 0, "")
		p.Spec.Volumes = []corev1.Volume{{Name: volume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium}}}}
		return p
	}
	volumeStats := func(s statsapi.PodStats, volume string, used uint64) statsapi.PodStats {
		s.VolumeStats = []statsapi.VolumeStats{{Name: volume, FsStats: statsapi.FsStats{UsedBytes: &used}}}
		return s
	}
	pods := []*corev1.Pod{
		pod("rootfs-50", 0, ""),                                     // 50Mi in its writable layer
		withVolume("emptydir-100", "scratch", ""),                   // 5Mi + 100Mi in its emptyDir
		withVolume("memory-500", "ram", corev1.StorageMediumMemory), // 1Mi + 500Mi of tmpfs, not disk
	}
	stats := map[types.UID]statsapi.PodStats{
		"rootfs-50":    podStats("rootfs-50", m, 50*m, 1, 1),
		"emptydir-100": volumeStats(podStats("emptydir-100", m, 5*m, 1, 1), "scratch", 100*m),
		"memory-500":   volumeStats(podStats("memory-500", m, 1*m, 1, 1), "ram", 500*m),
	}
	if got := names(KubeletRanker{}.Rank(SignalNodeFsAvailable, pods, stats)); got != "emptydir-100,rootfs-50,memory-500" {
		t.Fatalf("Rank(nodefs.available) = %s, want the emptyDir user, then the writable layer, then the tmpfs user", got)
	}
}
