//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// defaultCgroupPod is a Burstable pod whose container limits memory and
// cpu: its pod cgroup gets both limits.
func defaultCgroupPod(image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: defcg
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    resources:
      requests: {cpu: 50m, memory: 16Mi}
      limits: {cpu: 100m, memory: 32Mi}
`, image)
}

// TestAnAgentWithoutCgroupSettingsKeepsPodCgroupsUnderKubepods starts an
// agent with no cgroup setting at all (nodekit.Config's CgroupParent
// empty, as `nodekit run` without --cgroup-root), so it uses the
// kubelet's default cgroup root "/": the pod's sandbox runs under
// /kubepods/burstable/pod<uid> with the pod's limits, and the pod cgroup
// goes when the pod does.
//
// This is the only test that uses the default root: it creates
// /sys/fs/cgroup/<controller>/kubepods on the host, outside the lab's
// private cgroup. It removes its pod's cgroup (the agent does, and the
// test checks it), and at the end the QoS cgroups, when they were not
// there before it and are empty; it removes nothing else.
func TestAnAgentWithoutCgroupSettingsKeepsPodCgroupsUnderKubepods(t *testing.T) {
	// Every hierarchy: the runtime makes the pod's cgroup in each, the
	// unified one of a hybrid host too.
	var controllers []string
	mounts, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if m.IsDir() {
			controllers = append(controllers, m.Name())
		}
	}
	var existed []string
	for _, c := range controllers {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, "kubepods")); err == nil {
			existed = append(existed, c)
		}
	}
	if len(existed) > 0 {
		t.Skipf("/kubepods already exists in %v: another agent with the default root runs on this machine", existed)
	}
	// Registered before the harness, so it runs after the harness removed
	// its sandboxes: the QoS cgroups this test made go, when empty.
	t.Cleanup(func() {
		for _, c := range controllers {
			for _, rel := range []string{"kubepods/burstable", "kubepods/besteffort", "kubepods"} {
				if err := os.Remove(filepath.Join("/sys/fs/cgroup", c, rel)); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Logf("left /sys/fs/cgroup/%s/%s: %v", c, rel, err)
				}
			}
		}
	})
	h := newAgentHarness(t)
	h.startWith(func(c *nodekit.Config) {
		c.CRI.CgroupParent = "" // no cgroup setting: the kubelet's default
		c.Agent.ContainerGCPeriod = time.Second
	})
	h.writeManifest("defcg.yaml", defaultCgroupPod(h.env.Image))
	pod := h.waitPod("defcg", 60*time.Second, "running", running)
	podCgroup := path.Join("/kubepods/burstable", "pod"+string(pod.UID))

	t.Run("the sandbox has the pod cgroup as its parent", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rs := h.env.runtime(t)
		sbs, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{noderuntime.LabelPodUID: string(pod.UID)}})
		if err != nil || len(sbs) != 1 {
			t.Fatalf("sandboxes of the pod: %v (%v)", sbs, err)
		}
		st, err := rs.PodSandboxStatus(ctx, sbs[0].Id, true)
		if err != nil {
			t.Fatal(err)
		}
		if info := st.GetInfo()["info"]; !strings.Contains(info, podCgroup) {
			t.Errorf("sandbox info does not name the cgroup parent %s:\n%.600s", podCgroup, info)
		}
		// With a cgroup parent, the runtime has the sandbox's stats.
		stats, err := rs.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{Id: sbs[0].Id})
		if err != nil || len(stats) != 1 || stats[0].GetLinux().GetMemory() == nil {
			t.Errorf("sandbox stats = %v (%v), want the pod's memory", stats, err)
		}
	})
	t.Run("the pod cgroup has the pod's limits", func(t *testing.T) {
		for _, c := range []struct{ ctrl, file, want string }{
			{"memory", "memory.limit_in_bytes", strconv.Itoa(32 << 20)},
			{"cpu", "cpu.cfs_quota_us", "10000"},
			{"cpu", "cpu.shares", "51"},
		} {
			if got, err := cgroupFile(c.ctrl, podCgroup, c.file); err != nil || got != c.want {
				t.Errorf("%s of %s = %q (%v), want %s", c.file, podCgroup, got, err, c.want)
			}
		}
		if got, err := cgroupFile("cpu", "/kubepods/besteffort", "cpu.shares"); err != nil || got != "2" {
			t.Errorf("besteffort cpu.shares = %q (%v), want 2", got, err)
		}
		if got, err := cgroupFile("cpu", "/kubepods/burstable", "cpu.shares"); err != nil || got != "51" {
			t.Errorf("burstable cpu.shares = %q (%v), want 51 (the requests of its one pod)", got, err)
		}
	})
	t.Run("the container runs in the pod cgroup", func(t *testing.T) {
		if cg := h.mustExec(pod, "main", "cat", "/proc/1/cgroup"); !strings.Contains(cg, podCgroup+"/") {
			t.Errorf("/proc/1/cgroup does not name %s:\n%s", podCgroup, cg)
		}
	})

	h.removeManifest("defcg.yaml")
	deadline := time.Now().Add(60 * time.Second)
	for {
		var left []string
		for _, c := range controllers {
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, podCgroup)); err == nil {
				left = append(left, c)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod cgroup %s still in %v 60s after the pod was removed", podCgroup, left)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/kubepods/burstable"); err != nil {
		t.Errorf("the Burstable QoS cgroup went with the pod: %v", err)
	}
}
