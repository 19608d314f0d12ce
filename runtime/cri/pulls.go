package cri

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// puller is the manager's image pull machinery, the kubelet's image
// manager and puller in one: it bounds how many pulls run at once (one when
// pulls are serialized), keeps the ImagePullBackOff of every pod's image,
// and holds the SecretGetter for pull secrets. Safe for concurrent use.
type puller struct {
	// tokens bounds concurrent pulls; nil means no bound.
	tokens chan struct{}
	// backOff is the per-pod, per-image pull backoff; it has its own lock.
	backOff *flowcontrol.Backoff
	clk     clock.Clock

	mu       sync.Mutex
	failures map[string]pullFailure // by backoff key
	secrets  SecretGetter
}

// pullFailure is the last failed pull of an image for a pod.
type pullFailure struct {
	at  time.Time
	msg string
}

// newPuller returns the puller for cfg (with defaults filled in).
func newPuller(cfg Config, clk clock.Clock) *puller {
	p := &puller{
		backOff:  flowcontrol.NewFakeBackOff(cfg.ImagePullBackOff, cfg.ImagePullMaxBackOff, clk),
		clk:      clk,
		failures: map[string]pullFailure{},
	}
	switch {
	case cfg.serializeImagePulls():
		p.tokens = make(chan struct{}, 1)
	case cfg.MaxParallelImagePulls > 0:
		p.tokens = make(chan struct{}, cfg.MaxParallelImagePulls)
	}
	return p
}

// pullBackOffKey is the kubelet's image backoff key: the pod and the image.
func pullBackOffKey(pod *corev1.Pod, image string) string {
	return string(pod.UID) + "_" + image
}

// inBackOff reports whether the image failed to pull for the pod less than
// its backoff ago; it then returns the message to show (the kubelet's
// "Back-off pulling image" with the last error) and how long is left.
func (p *puller) inBackOff(key, image string) (msg string, left time.Duration, ok bool) {
	now := p.clk.Now()
	if !p.backOff.IsInBackOffSinceUpdate(key, now) {
		return "", 0, false
	}
	p.mu.Lock()
	last, found := p.failures[key]
	p.mu.Unlock()
	msg = fmt.Sprintf("Back-off pulling image %q", image)
	if !found {
		return msg, p.backOff.Get(key), true
	}
	return msg + ": " + last.msg, last.at.Add(p.backOff.Get(key)).Sub(now), true
}

// failed records a failed pull and lengthens the image's backoff.
func (p *puller) failed(key, msg string) {
	now := p.clk.Now()
	p.backOff.Next(key, now)
	p.mu.Lock()
	p.failures[key] = pullFailure{at: now, msg: msg}
	p.mu.Unlock()
}

// succeeded forgets the image's failures (its backoff entry expires) and
// drops stale backoff entries.
func (p *puller) succeeded(key string) {
	p.mu.Lock()
	delete(p.failures, key)
	p.mu.Unlock()
	p.backOff.GC()
}

// gc forgets failures whose backoff entry is gone.
func (p *puller) gc() {
	p.backOff.GC()
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, f := range p.failures {
		if now.Sub(f.at) > 2*p.backOff.Get(key) && !p.backOff.IsInBackOffSinceUpdate(key, now) {
			delete(p.failures, key)
		}
	}
}

// pull runs one PullImage when a token is free, trying each credential in
// turn until one works (without credentials when there are none). It
// blocks while the pulls ahead of it run, until ctx ends.
func (p *puller) pull(ctx context.Context, is criapi.ImageManagerService, spec *runtimeapi.ImageSpec, creds []*runtimeapi.AuthConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if p.tokens != nil {
		select {
		case p.tokens <- struct{}{}:
			defer func() { <-p.tokens }()
		case <-ctx.Done():
			return "", fmt.Errorf("wait for an image pull slot: %w", ctx.Err())
		}
	}
	if len(creds) == 0 {
		return is.PullImage(ctx, spec, nil, sbCfg)
	}
	var errs []error
	for _, auth := range creds {
		ref, err := is.PullImage(ctx, spec, auth, sbCfg)
		if err == nil {
			return ref, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

// setSecrets sets the SecretGetter; nil turns pull secrets off.
func (p *puller) setSecrets(g SecretGetter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.secrets = g
}

func (p *puller) secretGetter() SecretGetter {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.secrets
}

// SetSecretGetter makes the manager read the Secrets a pod names in
// imagePullSecrets through g and pull its images with the docker registry
// credentials they hold. Without a getter (nil, the default) pulls carry no
// credentials. Safe for concurrent use.
func (m *Manager) SetSecretGetter(g SecretGetter) {
	m.pulls.setSecrets(g)
}

// pullCredentials reads the pod's pull secrets and returns the credentials
// that apply to image, the most specific first. A secret that cannot be
// read or parsed is logged and skipped, as the kubelet does: the pull may
// still work without it.
func (m *Manager) pullCredentials(ctx context.Context, pod *corev1.Pod, image string) []*runtimeapi.AuthConfig {
	getter := m.pulls.secretGetter()
	if getter == nil || len(pod.Spec.ImagePullSecrets) == 0 {
		return nil
	}
	var kr keyring
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		s, err := getter.GetSecret(ctx, pod.Namespace, ref.Name)
		if err == nil {
			err = kr.addSecret(s)
		}
		if err != nil {
			m.log.Info("Unable to retrieve pull secret, the image pull may not succeed", "pod", formatPod(pod), "secret", ref.Name, "err", err.Error())
		}
	}
	return kr.lookup(image)
}

// pullBackOff records a failed PullImage step wrapping
// runtime.ErrImagePullBackOff, with the time left in RetryAfter, when the
// image's pull backoff for the pod has not ended; it reports whether it did.
func (m *Manager) pullBackOff(pod *corev1.Pod, c *corev1.Container, key string, result *noderuntime.SyncResult) bool {
	msg, left, ok := m.pulls.inBackOff(key, c.Image)
	if !ok {
		return false
	}
	result.Steps = append(result.Steps, noderuntime.StepResult{
		Action: noderuntime.PullImage, Target: c.Name, Message: msg,
		Err: fmt.Errorf("%w: %s", noderuntime.ErrImagePullBackOff, msg), RetryAfter: left,
	})
	m.log.V(4).Info("back-off pulling image", "pod", formatPod(pod), "container", c.Name, "image", c.Image, "left", left)
	m.containerEvent(pod, c.Name, corev1.EventTypeNormal, EventBackOff, "Back-off pulling image %q", c.Image)
	return true
}
