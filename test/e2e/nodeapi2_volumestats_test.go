//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/managers/nodeip"
)

// TestStatsSummaryHasThePodsVolumes extends the stats tests with the pods'
// volume entries: through the API server's node proxy, /stats/summary
// lists each emptyDir, configMap and projected volume of a pod with
// usedBytes, inodesUsed, capacity and available as the kubelet reports
// them (du of the volume, statfs of its filesystem), counts them in the
// pod's ephemeral storage, and leaves the hostPath volume out (its plugin
// reports no usage). An init container writes 1 MiB into the emptyDir
// before the first summary can be read.
func TestStatsSummaryHasThePodsVolumes(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	addr := proxyableNodeIP(t, c)
	h.configure = func(cfg *nodekit.Config) { cfg.Agent.NodeIP = addr }
	ns := h.joinCluster(c)
	h.start()
	ctx := context.Background()
	if _, err := c.admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "1", "b": "2"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := h.apiPod(ns, "vols", 0)
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "settings", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
		{Name: "bundle", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
		}}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: t.TempDir()}}},
	}
	mounts := []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "settings", MountPath: "/settings"},
		{Name: "bundle", MountPath: "/bundle"}, {Name: "host", MountPath: "/host"}}
	pod.Spec.Containers[0].VolumeMounts = mounts
	pod.Spec.InitContainers = []corev1.Container{{
		Name: "fill", Image: h.env.Image, ImagePullPolicy: corev1.PullIfNotPresent, VolumeMounts: mounts,
		Command: []string{"sh", "-c", "dd if=/dev/zero of=/data/blob bs=1024 count=1024 && mkdir /data/d && touch /data/d/f"},
	}}
	created, err := c.admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Every volume but hostPath, the API server's kube-api-access-*
	// service-account volume included.
	var want []string
	for _, v := range created.Spec.Volumes {
		if v.HostPath == nil {
			want = append(want, v.Name)
		}
	}
	waitAPIPod(t, c, ns, "vols", settle, "running", apiRunning)

	var got map[string]statsapi.FsStats
	var ephemeral *statsapi.FsStats
	missing := "no answer"
	for deadline := time.Now().Add(time.Minute); missing != "" && time.Now().Before(deadline); {
		missing, got, ephemeral = podVolumes(c, h.node, ns, "vols")
		if missing == "" {
			for _, name := range want {
				if _, ok := got[name]; !ok {
					missing = "volume " + name
				}
			}
		}
		if missing != "" {
			time.Sleep(time.Second)
		}
	}
	if missing != "" {
		t.Fatalf("/stats/summary still lacks %s after a minute (volumes %v)", missing, got)
	}
	if _, ok := got["host"]; ok || len(got) != len(want) {
		t.Errorf("volumes %v, want %v (no hostPath)", names(got), want)
	}
	for name, fs := range got {
		if fs.UsedBytes == nil || fs.InodesUsed == nil || fs.CapacityBytes == nil || *fs.CapacityBytes == 0 ||
			fs.AvailableBytes == nil || fs.Inodes == nil || *fs.Inodes == 0 || fs.InodesFree == nil || fs.Time.IsZero() {
			t.Errorf("volume %s: incomplete fsStats %s", name, fsString(fs))
		}
	}
	data := got["data"]
	if *data.UsedBytes < 1<<20 || *data.InodesUsed != 4 {
		t.Errorf("data volume %s, want at least the 1 MiB the init container wrote and 4 inodes (/, blob, d, d/f)", fsString(data))
	}
	// The configMap volume holds the atomic writer's ..data link, its
	// timestamped directory and the two keys' links and files.
	if s := got["settings"]; *s.InodesUsed < 5 {
		t.Errorf("settings volume %s, want the configMap's files", fsString(s))
	}
	if ephemeral == nil || ephemeral.UsedBytes == nil || *ephemeral.UsedBytes < *data.UsedBytes {
		t.Errorf("ephemeral storage %v does not count the data volume's %d bytes", ephemeral, *data.UsedBytes)
	}
	t.Logf("volumes: data %s; settings %s; bundle %s", fsString(data), fsString(got["settings"]), fsString(got["bundle"]))
}

// proxyableNodeIP is a node address the API server's node proxy accepts
// (it refuses loopback ones, the harness's default) and reaches the
// agent's secure port, which listens on every address: metrics-server-up's
// redirected address when it is up, else the machine's own address as the
// agent detects it (managers/nodeip, the default route's interface).
func proxyableNodeIP(t *testing.T, c clusterEnv) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(filepath.Dir(c.adminKubeconfig), "metrics-server", "env")); err == nil {
		_, addr := metricsServerEnv(t, c)
		return addr
	}
	host, _ := os.Hostname()
	ips, err := nodeip.NewDetector(nil, clock.RealClock{}, logr.Discard(), nodeip.Config{NodeName: host}).NodeIPs()
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil && a.Is4() && !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			return ip
		}
	}
	fail := t.Skipf
	if isCI() {
		fail = t.Fatalf
	}
	fail("no address of this machine that the API server proxies to (%v %v), and no metrics-server env", ips, err)
	return ""
}

// podVolumes reads the summary and returns the pod's volume entries by
// name and its ephemeral storage, or what is missing.
func podVolumes(c clusterEnv, node, ns, name string) (string, map[string]statsapi.FsStats, *statsapi.FsStats) {
	body, err := nodeProxy(c, node, "/stats/summary")
	if err != nil {
		return fmt.Sprintf("%v (%s)", err, body), nil, nil
	}
	var s statsapi.Summary
	if err := json.Unmarshal(body, &s); err != nil {
		return fmt.Sprintf("decode: %v", err), nil, nil
	}
	for _, p := range s.Pods {
		if p.PodRef.Namespace == ns && p.PodRef.Name == name {
			out := map[string]statsapi.FsStats{}
			for _, v := range p.VolumeStats {
				out[v.Name] = v.FsStats
			}
			return "", out, p.EphemeralStorage
		}
	}
	return "pod " + ns + "/" + name, nil, nil
}

func names(m map[string]statsapi.FsStats) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func fsString(fs statsapi.FsStats) string {
	v := func(p *uint64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("used %s inodesUsed %s capacity %s available %s inodes %s inodesFree %s",
		v(fs.UsedBytes), v(fs.InodesUsed), v(fs.CapacityBytes), v(fs.AvailableBytes), v(fs.Inodes), v(fs.InodesFree))
}
