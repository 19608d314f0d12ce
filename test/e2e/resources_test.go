//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit"
)

// confinedPod has a Burstable pod's worth of settings: a limited container
// running as 1234:2345 with a read-only root, a root container without
// CAP_NET_RAW, DNS from dnsConfig only and a fully qualified hostname.
func confinedPod(image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: confined
spec:
  terminationGracePeriodSeconds: 5
  hostname: box
  subdomain: web
  setHostnameAsFQDN: true
  dnsPolicy: None
  dnsConfig:
    nameservers: ["192.0.2.53"]
    searches: ["e2e.test"]
    options: [{name: ndots, value: "3"}]
  containers:
  - name: limited
    image: %[1]s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    resources:
      requests: {cpu: 100m, memory: 32Mi}
      limits: {cpu: 250m, memory: 64Mi}
    securityContext:
      runAsUser: 1234
      runAsGroup: 2345
      runAsNonRoot: true
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
  - name: rootful
    image: %[1]s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    resources:
      requests: {cpu: 50m, memory: 16Mi}
      limits: {cpu: 100m, memory: 32Mi}
    securityContext:
      capabilities:
        drop: ["NET_RAW"]
`, image)
}

func running(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

func TestResourcesAndSecurityContextReachTheContainers(t *testing.T) {
	h := newAgentHarness(t)
	if h.env.CgroupParent == "" {
		t.Skip("the pod cgroup checks need NODEKIT_CGROUP_PARENT")
	}
	h.startWith(func(c *nodekit.Config) { c.Agent.ContainerGCPeriod = time.Second })
	h.writeManifest("confined.yaml", confinedPod(h.env.Image))
	pod := h.waitPod("confined", 60*time.Second, "both containers running", running)
	if pod.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("qosClass %q, want Burstable", pod.Status.QOSClass)
	}

	podCgroup := path.Join(h.env.CgroupParent, "kubepods", "burstable", "pod"+string(pod.UID))
	t.Run("the pod cgroup has the pod's limits", func(t *testing.T) {
		for _, c := range []struct{ ctrl, file, want string }{
			{"memory", "memory.limit_in_bytes", strconv.Itoa(96 << 20)},
			{"cpu", "cpu.cfs_quota_us", "35000"},
			{"cpu", "cpu.cfs_period_us", "100000"},
			{"cpu", "cpu.shares", "153"},
		} {
			if got, err := cgroupFile(c.ctrl, podCgroup, c.file); err != nil || got != c.want {
				t.Errorf("%s of %s = %q (%v), want %s", c.file, podCgroup, got, err, c.want)
			}
		}
	})
	t.Run("the container sees its memory limit and cpu quota in its cgroup", func(t *testing.T) {
		if got := h.mustExec(pod, "limited", "cat", "/sys/fs/cgroup/memory/memory.limit_in_bytes"); got != strconv.Itoa(64<<20) {
			t.Errorf("memory.limit_in_bytes = %s, want %d", got, 64<<20)
		}
		if got := h.mustExec(pod, "limited", "cat", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); got != "25000" {
			t.Errorf("cpu.cfs_quota_us = %s, want 25000", got)
		}
		if got := h.mustExec(pod, "limited", "cat", "/sys/fs/cgroup/cpu/cpu.shares"); got != "102" {
			t.Errorf("cpu.shares = %s, want 102", got)
		}
		cg := h.mustExec(pod, "limited", "cat", "/proc/1/cgroup")
		if !strings.Contains(cg, podCgroup+"/") {
			t.Errorf("/proc/1/cgroup does not name the pod cgroup %s:\n%s", podCgroup, cg)
		}
	})
	t.Run("a Burstable container's oom_score_adj follows its memory request", func(t *testing.T) {
		want := 1000 - 1000*int64(32<<20)/memTotal()
		if want >= 1000 {
			want = 999
		}
		if got := h.mustExec(pod, "limited", "cat", "/proc/1/oom_score_adj"); got != strconv.FormatInt(want, 10) {
			t.Errorf("oom_score_adj = %s, want %d", got, want)
		}
	})
	t.Run("runAsUser and runAsGroup are honoured", func(t *testing.T) {
		if got := h.mustExec(pod, "limited", "id", "-u"); got != "1234" {
			t.Errorf("id -u = %s, want 1234", got)
		}
		if got := h.mustExec(pod, "limited", "id", "-g"); got != "2345" {
			t.Errorf("id -g = %s, want 2345", got)
		}
		status := h.mustExec(pod, "limited", "cat", "/proc/1/status")
		if !strings.Contains(status, "NoNewPrivs:\t1") {
			t.Errorf("allowPrivilegeEscalation false did not set no_new_privs:\n%s", status)
		}
	})
	t.Run("a dropped capability is missing and the others remain", func(t *testing.T) {
		status := h.mustExec(pod, "rootful", "cat", "/proc/1/status")
		for _, line := range []string{"CapEff", "CapBnd"} {
			bits, ok := capabilityBits(status, line)
			const netRaw, chown = 1 << 13, 1 << 0
			if !ok || bits&netRaw != 0 || bits&chown == 0 {
				t.Errorf("%s = %x (found %v): want CAP_NET_RAW off and CAP_CHOWN on", line, bits, ok)
			}
		}
	})
	t.Run("a read-only root filesystem refuses a write", func(t *testing.T) {
		if out, err := h.execOut(pod, "limited", "touch", "/written"); err == nil {
			t.Errorf("touch / succeeded in a read-only root (%s)", out)
		} else if !strings.Contains(out, "Read-only file system") {
			t.Errorf("touch / failed for another reason: %v (%s)", err, out)
		}
		h.mustExec(pod, "rootful", "touch", "/written") // the other container may write
	})
	t.Run("DNS comes from dnsConfig and the hostname is fully qualified", func(t *testing.T) {
		resolv := h.mustExec(pod, "rootful", "cat", "/etc/resolv.conf")
		for _, want := range []string{"nameserver 192.0.2.53", "search e2e.test", "options ndots:3"} {
			if !strings.Contains(resolv, want) {
				t.Errorf("resolv.conf lacks %q:\n%s", want, resolv)
			}
		}
		if got := h.mustExec(pod, "rootful", "hostname"); got != "box.web.default.svc.cluster.local" {
			t.Errorf("hostname = %s, want box.web.default.svc.cluster.local", got)
		}
	})

	// Once the pod is gone, garbage collection removes its cgroup.
	if err := os.Remove(h.manifests + "/confined.yaml"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := os.Stat("/sys/fs/cgroup/memory" + podCgroup)
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod cgroup %s still there 60s after the pod was removed (%v)", podCgroup, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestRunAsNonRootRefusesARootImage(t *testing.T) {
	h := newAgentHarness(t)
	h.start()
	h.writeManifest("nonroot.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: nonroot
spec:
  securityContext:
    runAsNonRoot: true
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
`, h.env.Image))
	h.waitPod("nonroot", 30*time.Second, "CreateContainerConfigError", func(p *corev1.Pod) bool {
		st := statusOf(p, "main")
		return st != nil && st.State.Waiting != nil && st.State.Waiting.Reason == "CreateContainerConfigError" &&
			strings.Contains(st.State.Waiting.Message, "container has runAsNonRoot and image will run as root")
	})
	if n := len(h.runningContainers()); n != 0 {
		t.Errorf("%d containers run, want none", n)
	}
}

func TestAdmissionRejectsAPodThatDoesNotFit(t *testing.T) {
	h := newAgentHarness(t)
	h.start()
	h.writeManifest("huge.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: huge
spec:
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
    resources:
      requests: {cpu: "1000"}
`, h.env.Image))
	p := h.waitPod("huge", 30*time.Second, "rejection", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if p.Status.Reason != "OutOfcpu" || !strings.Contains(p.Status.Message, "Node didn't have enough resource: cpu, requested: 1000000") {
		t.Errorf("status reason %q message %q, want OutOfcpu with the amounts", p.Status.Reason, p.Status.Message)
	}
}
