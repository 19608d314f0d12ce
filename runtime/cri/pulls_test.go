package cri

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// pullRecorder wraps the fake image service: it records every PullImage
// with its credentials, fails pulls as told, and can hold pulls open.
type pullRecorder struct {
	*fakeapi.FakeImageService

	mu      sync.Mutex
	auths   []*runtimeapi.AuthConfig
	fail    func(auth *runtimeapi.AuthConfig) error
	running int
	most    int
	gate    chan struct{} // when set, each pull waits for a value
	started chan struct{} // when set, each pull sends when it starts
}

func (p *pullRecorder) PullImage(ctx context.Context, spec *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sb *runtimeapi.PodSandboxConfig) (string, error) {
	p.mu.Lock()
	p.auths = append(p.auths, auth)
	p.running++
	p.most = max(p.most, p.running)
	fail, gate, started := p.fail, p.gate, p.started
	p.mu.Unlock()
	if started != nil {
		started <- struct{}{}
	}
	defer func() {
		p.mu.Lock()
		p.running--
		p.mu.Unlock()
	}()
	if gate != nil {
		<-gate
	}
	if fail != nil {
		if err := fail(auth); err != nil {
			return "", err
		}
	}
	return p.FakeImageService.PullImage(ctx, spec, auth, sb)
}

func (p *pullRecorder) pulls() []*runtimeapi.AuthConfig {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*runtimeapi.AuthConfig(nil), p.auths...)
}

// newPullEnv is a test env whose pulls go through a pullRecorder.
func newPullEnv(t *testing.T, mutate ...func(*Config)) (*testEnv, *pullRecorder) {
	e := newTestEnv(t, mutate...)
	p := &pullRecorder{FakeImageService: e.is}
	e.m.is = p
	return e, p
}

// alwaysPod is a pod whose container pulls image with policy Always.
func alwaysPod(uid, image string) *corev1.Pod {
	pod := newPod(uid, "a")
	pod.Spec.Containers[0].Image = image
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
	return pod
}

func TestImagePullFailuresBackOffPerPodAndImage(t *testing.T) {
	t.Parallel()
	e, p := newPullEnv(t)
	p.fail = func(*runtimeapi.AuthConfig) error { return errors.New("not found") }
	pod := alwaysPod("u1", "registry.test/missing:1")
	type want struct {
		advance    time.Duration
		reason     string
		retryAfter time.Duration
		pulls      int
	}
	script := []want{
		{0, "ErrImagePull", 0, 1},
		{5 * time.Second, "ImagePullBackOff", 5 * time.Second, 1},
		{5 * time.Second, "ErrImagePull", 0, 2}, // 10s passed: pulled again
		{10 * time.Second, "ImagePullBackOff", 10 * time.Second, 2},
		{10 * time.Second, "ErrImagePull", 0, 3}, // 20s passed
		{39 * time.Second, "ImagePullBackOff", time.Second, 3},
	}
	for i, w := range script {
		e.clk.Step(w.advance)
		r := e.sync(t, pod)
		reason, msg := r.Waiting("a")
		if reason != w.reason || len(p.pulls()) != w.pulls || r.RetryAfter() != w.retryAfter {
			t.Fatalf("step %d: reason %q (%s), %d pulls, retry after %s; want %q, %d pulls, %s",
				i, reason, msg, len(p.pulls()), r.RetryAfter(), w.reason, w.pulls, w.retryAfter)
		}
		if w.reason == "ImagePullBackOff" {
			if !r.OnlyBackOff() || !strings.Contains(msg, `Back-off pulling image "registry.test/missing:1": ErrImagePull:`) {
				t.Errorf("step %d: OnlyBackOff %v, message %q", i, r.OnlyBackOff(), msg)
			}
		}
	}
	// Another pod's pull of the same image is not held back.
	if reason, _ := e.sync(t, alwaysPod("u2", "registry.test/missing:1")).Waiting("a"); reason != "ErrImagePull" {
		t.Errorf("another pod: reason %q, want ErrImagePull", reason)
	}
	// Once the pull works, the backoff is forgotten.
	p.fail = nil
	e.clk.Step(40 * time.Second)
	if err := e.sync(t, pod).Error(); err != nil {
		t.Fatalf("sync after the registry recovered: %v", err)
	}
	if _, _, in := e.m.pulls.inBackOff(pullBackOffKey(pod, "registry.test/missing:1"), ""); in {
		t.Error("still in backoff after a successful pull")
	}
}

func TestImagePullBackOffIsCappedAtItsMaximum(t *testing.T) {
	t.Parallel()
	e, p := newPullEnv(t, func(c *Config) { c.ImagePullBackOff = time.Second; c.ImagePullMaxBackOff = 4 * time.Second })
	p.fail = func(*runtimeapi.AuthConfig) error { return errors.New("unavailable") }
	pod := alwaysPod("u1", "registry.test/x:1")
	var gaps []time.Duration
	last := e.clk.Now()
	for range 40 {
		before := len(p.pulls())
		e.sync(t, pod)
		if len(p.pulls()) > before {
			if before > 0 {
				gaps = append(gaps, e.clk.Since(last))
			}
			last = e.clk.Now()
		}
		e.clk.Step(500 * time.Millisecond)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}
	if len(gaps) < len(want) {
		t.Fatalf("gaps %v, want at least %v", gaps, want)
	}
	for i, w := range want {
		if gaps[i] != w {
			t.Errorf("gaps %v, want them to start %v", gaps, want)
			break
		}
	}
}

func TestImagePullsAreSerialOrBounded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  func(*Config)
		most int
	}{
		{"pulls are serialized by default", nil, 1},
		{"parallel pulls respect their cap", func(c *Config) { c.SerializeImagePulls = ptr(false); c.MaxParallelImagePulls = 2 }, 2},
		{"parallel pulls without a cap all run at once", func(c *Config) { c.SerializeImagePulls = ptr(false) }, 4},
	}
	const pods = 4
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mutate []func(*Config)
			if c.cfg != nil {
				mutate = append(mutate, c.cfg)
			}
			e, p := newPullEnv(t, mutate...)
			p.gate, p.started = make(chan struct{}), make(chan struct{}, pods)
			var wg sync.WaitGroup
			for i := range pods {
				wg.Add(1)
				go func() {
					defer wg.Done()
					pod := alwaysPod(fmt.Sprintf("u%d", i), fmt.Sprintf("registry.test/img%d:1", i))
					e.m.SyncPod(context.Background(), pod, nil)
				}()
			}
			// Wait for as many pulls as may run at once, then let them
			// finish one by one, each making room for the next.
			for range c.most {
				<-p.started
			}
			for i := range pods {
				p.gate <- struct{}{}
				if i+c.most < pods {
					<-p.started
				}
			}
			wg.Wait()
			if p.most != c.most {
				t.Errorf("at most %d pulls ran at once, want %d", p.most, c.most)
			}
		})
	}
}

// fakeSecrets is a SecretGetter over a map by namespace/name.
type fakeSecrets map[string]*corev1.Secret

func (f fakeSecrets) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if s, ok := f[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("secret %s/%s not found", ns, name)
}

func dockerConfigSecret(name, registry, user, pass string) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"` + registry + `":{"auth":"` + auth + `"}}}`)},
	}
}

func TestPullSecretsGiveThePullItsCredentials(t *testing.T) {
	t.Parallel()
	secrets := fakeSecrets{
		"default/reg":   dockerConfigSecret("reg", "127.0.0.1:5001", "alice", "s3cret"),
		"default/wrong": dockerConfigSecret("wrong", "127.0.0.1:5001", "bob", "nope"),
		"default/other": dockerConfigSecret("other", "other.test", "carol", "x"),
	}
	onlyAlice := func(a *runtimeapi.AuthConfig) error {
		if a == nil || a.Username != "alice" || a.Password != "s3cret" {
			return errors.New("unauthorized")
		}
		return nil
	}
	cases := []struct {
		name      string
		getter    SecretGetter
		refs      []string
		wantUsers []string
		wantErr   bool
	}{
		{"the matching secret's credentials are used", secrets, []string{"other", "reg"}, []string{"alice"}, false},
		{"credentials are tried in turn until one works", secrets, []string{"wrong", "reg"}, []string{"bob", "alice"}, false},
		{"a missing secret is skipped and the pull goes without it", secrets, []string{"missing"}, []string{""}, true},
		{"without a secret getter the pull carries no credentials", nil, []string{"reg"}, []string{""}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, p := newPullEnv(t)
			p.fail = onlyAlice
			if c.getter != nil {
				e.m.SetSecretGetter(c.getter)
			}
			pod := alwaysPod("u1", "127.0.0.1:5001/nodekit/busybox:1")
			for _, r := range c.refs {
				pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: r})
			}
			err := e.sync(t, pod).Error()
			if (err != nil) != c.wantErr {
				t.Fatalf("sync error %v, want error %v", err, c.wantErr)
			}
			var users []string
			for _, a := range p.pulls() {
				users = append(users, a.GetUsername())
			}
			if strings.Join(users, ",") != strings.Join(c.wantUsers, ",") {
				t.Errorf("pulls as %q, want %q", users, c.wantUsers)
			}
			if c.wantErr && !errors.Is(err, noderuntime.ErrImagePull) {
				t.Errorf("error %v, want ErrImagePull", err)
			}
		})
	}
}
