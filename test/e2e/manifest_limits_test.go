//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestOversizedManifestsAreRefusedAndTheirNeighbourUndisturbed writes, beside
// a running static pod, a 10 MiB manifest (refused unread, as by the kubelet)
// and a manifest with a 9 MiB annotation (refused by the validation: the
// annotations limit is 256 KiB). Both are refused with an error naming the
// file and the cause, neither pod reaches the runtime, every CRI client can
// still list sandboxes, and the running pod keeps its containers.
func TestOversizedManifestsAreRefusedAndTheirNeighbourUndisturbed(t *testing.T) {
	h := newAgentHarness(t)
	h.writeManifest("good.yaml", twoContainerPod(h.env.Image, "good", "a"))
	h.start()
	before := h.waitPod("good", settle, "running", allReady)

	big := twoContainerPod(h.env.Image, "big", "b")
	big += "# " + strings.Repeat("x", 10<<20-len(big)-3) + "\n" // exactly 10 MiB
	h.writeManifest("big.yaml", big)
	annotated := strings.Replace(twoContainerPod(h.env.Image, "annotated", "c"), "  name: annotated\n",
		"  name: annotated\n  annotations:\n    huge: "+strings.Repeat("x", 9<<20)+"\n", 1)
	h.writeManifest("annotated.yaml", annotated)

	h.waitLogHolding(settle, "the 10 MiB manifest refused", `"Could not read pod manifest"`,
		funcrQuoted(filepath.Join(h.manifests, "big.yaml")), "10 MiB) or more are refused")
	h.waitLogHolding(settle, "the 9 MiB annotation refused", `"Could not read pod manifest"`,
		funcrQuoted(filepath.Join(h.manifests, "annotated.yaml")), "metadata.annotations: Too long")

	// Hold for a few relists and syncs: the good pod must not change and the
	// refused ones must never show up.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		pods, err := h.pods()
		if err != nil {
			t.Fatalf("read /pods: %v", err)
		}
		for _, p := range pods {
			if strings.HasPrefix(p.Name, "big-") || strings.HasPrefix(p.Name, "annotated-") {
				t.Fatalf("refused manifest became pod %s", p.Name)
			}
		}
	}
	after := h.waitPod("good", settle, "still running", allReady)
	if after.UID != before.UID {
		t.Fatalf("good pod UID changed: %s -> %s", before.UID, after.UID)
	}
	for i, cs := range after.Status.ContainerStatuses {
		b := before.Status.ContainerStatuses[i]
		if cs.ContainerID != b.ContainerID || cs.RestartCount != 0 || cs.State.Running == nil {
			t.Fatalf("container %s disturbed: before %s, after %s (restarts %d, state %+v)",
				cs.Name, b.ContainerID, cs.ContainerID, cs.RestartCount, cs.State)
		}
	}
	if n := len(h.runningContainers()); n != len(before.Spec.Containers) {
		t.Fatalf("%d running containers, want the good pod's %d", n, len(before.Spec.Containers))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.env.runtime(t).ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{}); err != nil {
		t.Fatalf("ListPodSandbox of every sandbox on the node: %v", err)
	}
}

// waitLogHolding polls the agent's log until one line holds every one of substrs.
func (h *agentHarness) waitLogHolding(timeout time.Duration, what string, substrs ...string) {
	h.t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, line := range strings.Split(h.logs.String(), "\n") {
			all := true
			for _, s := range substrs {
				all = all && strings.Contains(line, s)
			}
			if all {
				return
			}
		}
	}
	h.t.Fatalf("%s: no log line within %s holds all of %q", what, timeout, substrs)
}

// funcrQuoted is how the agent's log (funcr) renders a string value.
func funcrQuoted(s string) string { return `"` + s + `"` }
