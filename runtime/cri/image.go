package cri

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// pullPolicy is the container's imagePullPolicy, defaulted as the API server
// does for a pod that skipped defaulting: Always for an untagged or :latest
// image, IfNotPresent otherwise.
func pullPolicy(c *corev1.Container) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	img := c.Image
	if i := strings.LastIndex(img, "@"); i >= 0 {
		return corev1.PullIfNotPresent // pinned by digest
	}
	tag := ""
	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		tag = img[i+1:]
	}
	if tag == "" || tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// ensureImage makes c's image present according to its pull policy and
// returns the runtime's reference to it. Each pull is recorded as a PullImage
// step; a failure that is not a pull is recorded as a StartContainer step.
// ok is false when the container cannot start.
func (m *Manager) ensureImage(ctx context.Context, pod *corev1.Pod, c *corev1.Container, sbCfg *runtimeapi.PodSandboxConfig, result *noderuntime.SyncResult) (ref string, ok bool) {
	spec := &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image, RuntimeHandler: m.cfg.RuntimeHandler, Annotations: pod.Annotations}
	policy := pullPolicy(c)
	if policy != corev1.PullAlways {
		resp, err := m.is.ImageStatus(ctx, spec, false)
		if err != nil {
			err = fmt.Errorf("inspect image %q of container %q: %w: %w", c.Image, c.Name, noderuntime.ErrImagePull, err)
			result.Add(noderuntime.StartContainer, c.Name, err, fmt.Sprintf("Failed to inspect image %q: %v", c.Image, err))
			return "", false
		}
		if img := resp.GetImage(); img != nil {
			m.containerEvent(pod, c.Name, corev1.EventTypeNormal, EventPulled, "Container image %q already present on machine", c.Image)
			return img.GetId(), true
		}
		if policy == corev1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			result.Add(noderuntime.StartContainer, c.Name, fmt.Errorf("%w: %s", noderuntime.ErrImageNeverPull, msg), msg)
			m.containerEvent(pod, c.Name, corev1.EventTypeWarning, EventNeverPull, "%s", msg)
			return "", false
		}
	}
	key := pullBackOffKey(pod, c.Image)
	if m.pullBackOff(pod, c, key, result) {
		return "", false
	}
	m.log.V(2).Info("pulling image", "pod", formatPod(pod), "container", c.Name, "image", c.Image)
	m.containerEvent(pod, c.Name, corev1.EventTypeNormal, EventPulling, "Pulling image %q", c.Image)
	pullStart := m.clk.Now()
	ref, err := m.pulls.pull(ctx, m.is, spec, m.pullCredentials(ctx, pod, c.Image), sbCfg)
	if err != nil {
		m.pulls.failed(key, fmt.Sprintf("%s: %v", noderuntime.ErrImagePull, err))
		err = fmt.Errorf("pull image %q of container %q: %w: %w", c.Image, c.Name, noderuntime.ErrImagePull, err)
		result.Add(noderuntime.PullImage, c.Name, err, fmt.Sprintf("Failed to pull image %q: %v", c.Image, err))
		m.containerEvent(pod, c.Name, corev1.EventTypeWarning, EventFailed, "Failed to pull image %q: %v", c.Image, err)
		return "", false
	}
	m.pulls.succeeded(key)
	result.Add(noderuntime.PullImage, c.Name, nil, fmt.Sprintf("Successfully pulled image %q", c.Image))
	m.containerEvent(pod, c.Name, corev1.EventTypeNormal, EventPulled, "Successfully pulled image %q in %v", c.Image, m.clk.Since(pullStart))
	if ref == "" {
		ref = c.Image
	}
	return ref, true
}
