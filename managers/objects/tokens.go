package objects

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// The kubelet's token refresh rule: a token is refreshed once 80% of its
// lifetime has passed or once it is older than maxTokenTTL, each moved
// earlier by a random jitter of up to maxTokenJitter.
const (
	maxTokenTTL    = 24 * time.Hour
	maxTokenJitter = 10 * time.Second
)

// Tokens is the default TokenManager: the kubelet's token manager. It calls
// the TokenRequest API (ServiceAccounts(ns).CreateToken) and caches each
// token per service account, audiences, expiration and bound object. Run
// drops expired tokens periodically. Safe for concurrent use.
type Tokens struct {
	client kubernetes.Interface
	clk    clock.WithTicker
	log    logr.Logger
	cfg    Config

	mu    sync.Mutex
	cache map[string]*authenticationv1.TokenRequest

	// jitter returns the refresh jitter; tests make it 0.
	jitter func() time.Duration
}

var _ TokenManager = (*Tokens)(nil)

// NewTokens returns a Tokens that requests tokens through client. It does
// no I/O and starts nothing.
func NewTokens(client kubernetes.Interface, clk clock.WithTicker, log logr.Logger, cfg Config) *Tokens {
	return &Tokens{
		client: client,
		clk:    clk,
		log:    log.WithName("tokens"),
		cfg:    cfg.withDefaults(),
		cache:  map[string]*authenticationv1.TokenRequest{},
		jitter: func() time.Duration {
			return time.Duration(rand.Float64()*maxTokenJitter.Seconds()) * time.Second
		},
	}
}

// Run drops expired tokens every Config.TokenGCPeriod until ctx ends, then
// returns nil. It returns an error at once for an invalid Config.
func (m *Tokens) Run(ctx context.Context) error {
	if err := m.cfg.Validate(); err != nil {
		return err
	}
	t := m.clk.NewTicker(m.cfg.TokenGCPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			m.cleanup()
		}
	}
}

// GetServiceAccountToken implements TokenManager.
func (m *Tokens) GetServiceAccountToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	if tr == nil {
		return nil, errors.New("token request is nil")
	}
	key := tokenKey(namespace, name, tr)
	m.mu.Lock()
	cached, ok := m.cache[key]
	m.mu.Unlock()
	if ok && !m.requiresRefresh(cached) {
		return cached, nil
	}
	fresh, err := m.client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		if ok && !m.expired(cached) {
			m.log.Error(err, "Token refresh failed; using the cached token", "namespace", namespace, "serviceAccount", name)
			return cached, nil
		}
		return nil, fmt.Errorf("request token for service account %s/%s: %w", namespace, name, err)
	}
	m.mu.Lock()
	m.cache[key] = fresh
	m.mu.Unlock()
	return fresh, nil
}

// DeleteServiceAccountToken implements TokenManager.
func (m *Tokens) DeleteServiceAccountToken(podUID types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, tr := range m.cache {
		if ref := tr.Spec.BoundObjectRef; ref != nil && ref.UID == podUID {
			delete(m.cache, k)
		}
	}
}

// cleanup drops the expired tokens.
func (m *Tokens) cleanup() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, tr := range m.cache {
		if m.expired(tr) {
			delete(m.cache, k)
		}
	}
}

func (m *Tokens) expired(tr *authenticationv1.TokenRequest) bool {
	return m.clk.Now().After(tr.Status.ExpirationTimestamp.Time)
}

// requiresRefresh reports whether tr is past 80% of its lifetime or older
// than 24h (less the jitter). A token whose spec has no expiration is not
// refreshed, as the kubelet does.
func (m *Tokens) requiresRefresh(tr *authenticationv1.TokenRequest) bool {
	if tr.Spec.ExpirationSeconds == nil {
		m.log.Error(nil, "Cached token has no expirationSeconds; not refreshing it", "serviceAccountToken", tr.Name)
		return false
	}
	now := m.clk.Now()
	exp := tr.Status.ExpirationTimestamp.Time
	lifetime := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	issued := exp.Add(-lifetime)
	jitter := m.jitter()
	if now.After(issued.Add(maxTokenTTL - jitter)) {
		return true
	}
	return now.After(exp.Add(-lifetime*20/100 - jitter))
}

// tokenKey identifies a token by service account, audiences, expiration
// and bound object, as the kubelet's cache key does.
func tokenKey(namespace, name string, tr *authenticationv1.TokenRequest) string {
	var exp int64
	if tr.Spec.ExpirationSeconds != nil {
		exp = *tr.Spec.ExpirationSeconds
	}
	var ref authenticationv1.BoundObjectReference
	if tr.Spec.BoundObjectRef != nil {
		ref = *tr.Spec.BoundObjectRef
	}
	return fmt.Sprintf("%q/%q/%#v/%#v/%#v", name, namespace, tr.Spec.Audiences, exp, ref)
}
