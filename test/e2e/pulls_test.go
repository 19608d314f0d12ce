//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit"
)

// pullPod is a static pod of one container with the given image and policy.
func pullPod(name, image string, policy corev1.PullPolicy) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: main
    image: %s
    imagePullPolicy: %s
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
`, name, image, policy)
}

// waitingReason is the main container's waiting reason, or "".
func waitingReason(p *corev1.Pod) string {
	if st := statusOf(p, "main"); st != nil && st.State.Waiting != nil {
		return st.State.Waiting.Reason
	}
	return ""
}

// pullTimes are the times the agent's log shows it pulling image.
func (h *agentHarness) pullTimes(image string) []time.Time {
	re := regexp.MustCompile(`^(\d\d:\d\d:\d\d\.\d\d\d) .*"pulling image".*"image"="` + regexp.QuoteMeta(image) + `"`)
	var out []time.Time
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			if ts, err := time.Parse("15:04:05.000", m[1]); err == nil {
				out = append(out, ts)
			}
		}
	}
	return out
}

// removeImage deletes a registry image from the runtime, if it is there.
// CRI RemoveImage drops every name of the image, so it refuses an image
// that is the test image under another name (hack/registry-up.sh pushes a
// variant with its own ID).
func (h *agentHarness) removeImage(image string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	is := h.env.images(h.t)
	status := func(name string) *runtimeapi.Image {
		resp, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: name}, false)
		if err != nil {
			h.t.Fatalf("image status %s: %v", name, err)
		}
		return resp.GetImage()
	}
	img := status(image)
	if img == nil {
		return
	}
	if own := status(h.env.Image); own != nil && own.GetId() == img.GetId() {
		h.t.Fatalf("%s is the test image %s under another name; rerun hack/registry-up.sh", image, h.env.Image)
	}
	if err := is.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: image}); err != nil {
		h.t.Fatalf("remove image %s: %v", image, err)
	}
}

// freshImage removes image before the test and after it, so that the test
// pulls it and leaves nothing behind.
func (h *agentHarness) freshImage(image string) {
	h.t.Helper()
	h.removeImage(image)
	h.t.Cleanup(func() { h.removeImage(image) })
}

func (h *agentHarness) imagePresent(image string) bool {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := h.env.images(h.t).ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
	if err != nil {
		h.t.Fatalf("image status %s: %v", image, err)
	}
	return resp.GetImage() != nil
}

func TestMissingImageGoesFromErrImagePullToImagePullBackOffWithGrowingIntervals(t *testing.T) {
	h := newAgentHarness(t)
	// A registry that answers "not found" fails fast; without the loopback
	// registry a closed loopback port does too.
	image := "127.0.0.1:1/nodekit/missing:1"
	if vars, err := readEnvFile(registryEnvFile); err == nil && vars["NODEKIT_REGISTRY"] != "" {
		image = vars["NODEKIT_REGISTRY"] + "/nodekit/missing:1"
	}
	h.startWith(func(c *nodekit.Config) {
		c.CRI.ImagePullBackOff = 2 * time.Second
		c.CRI.ImagePullMaxBackOff = time.Minute
		c.PodWorkers.BackOffPeriod = time.Second
	})
	h.writeManifest("missing.yaml", pullPod("missing", image, corev1.PullAlways))
	seen := map[string]bool{}
	h.waitPod("missing", 60*time.Second, "ErrImagePull, then ImagePullBackOff, then 4 pulls", func(p *corev1.Pod) bool {
		r := waitingReason(p)
		if r == "ImagePullBackOff" && !seen["ErrImagePull"] {
			t.Fatalf("ImagePullBackOff before any ErrImagePull: %s", describe(p))
		}
		if r != "" {
			seen[r] = true
			if st := statusOf(p, "main"); r == "ImagePullBackOff" && !strings.Contains(st.State.Waiting.Message, "Back-off pulling image") {
				t.Errorf("ImagePullBackOff message %q", st.State.Waiting.Message)
			}
		}
		return seen["ErrImagePull"] && seen["ImagePullBackOff"] && len(h.pullTimes(image)) >= 4
	})
	times := h.pullTimes(image)
	var gaps []time.Duration
	for i := 1; i < len(times); i++ {
		gaps = append(gaps, times[i].Sub(times[i-1]))
	}
	t.Logf("intervals between pulls: %v", gaps)
	if gaps[0] < 2*time.Second || gaps[1] < 4*time.Second || gaps[2] < 8*time.Second || gaps[2] <= gaps[1] || gaps[1] <= gaps[0] {
		t.Errorf("intervals %v: want at least 2s, 4s, 8s, growing", gaps)
	}
	if n := len(h.runningContainers()); n != 0 {
		t.Errorf("%d containers run", n)
	}
}

func TestAlwaysPullsFromTheLoopbackRegistry(t *testing.T) {
	h := newAgentHarness(t)
	reg := loadRegistry(h)
	image := reg.open + "/" + reg.image
	h.freshImage(image)
	h.start()
	// The registry's image runs as 65534, which runAsNonRoot accepts.
	h.writeManifest("pulled.yaml", strings.Replace(pullPod("pulled", image, corev1.PullAlways),
		"  containers:", "  securityContext:\n    runAsNonRoot: true\n  containers:", 1))
	p := h.waitPod("pulled", 60*time.Second, "running from the pulled image", running)
	if got := h.mustExec(p, "main", "id", "-u"); got != "65534" {
		t.Errorf("id -u = %s, want the image's user 65534", got)
	}
	if !h.imagePresent(image) {
		t.Errorf("image %s not present after the pod started", image)
	}
	if st := statusOf(p, "main"); st == nil || st.ImageID == "" || len(h.pullTimes(image)) != 1 {
		t.Errorf("status %v after %d pulls, want an imageID after one pull", st, len(h.pullTimes(image)))
	}
}

func TestPullSecretIsUsedWhenTheRegistryAsksForAuth(t *testing.T) {
	h := newAgentHarness(t)
	reg := loadRegistry(h)
	if reg.auth == "" || reg.password == "" {
		t.Fatalf("the registry env has no authenticated registry: %+v", reg)
	}
	c := loadCluster(t)
	ns := h.joinCluster(c)
	image := reg.auth + "/" + reg.image
	h.freshImage(image)
	h.start()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	auth := base64.StdEncoding.EncodeToString([]byte(reg.user + ":" + reg.password))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry", Namespace: ns},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"` + reg.auth + `":{"auth":"` + auth + `"}}}`)},
	}
	if _, err := c.admin.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	anonymous := h.apiPod(ns, "anonymous", 0)
	anonymous.Spec.Containers[0].Image, anonymous.Spec.Containers[0].ImagePullPolicy = image, corev1.PullAlways
	withSecret := anonymous.DeepCopy()
	withSecret.Name = "with-secret"
	withSecret.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	for _, p := range []*corev1.Pod{anonymous, withSecret} {
		if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
	}
	waitAPIPod(t, c, ns, "with-secret", 90*time.Second, "running with the pulled image", apiRunning)
	waitAPIPod(t, c, ns, "anonymous", 60*time.Second, "an image pull error", func(p *corev1.Pod, err error) bool {
		if err != nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") && strings.Contains(strings.ToLower(w.Message), "authorization")
	})
}
