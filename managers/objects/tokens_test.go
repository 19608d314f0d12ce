package objects

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// tokenServer answers TokenRequests as the API server does: a new token
// per call, expiring expirationSeconds after the fake clock's now.
type tokenServer struct {
	clk   *clocktesting.FakeClock
	calls int
	fail  error
}

func (s *tokenServer) react(a k8stesting.Action) (bool, runtime.Object, error) {
	if a.GetSubresource() != "token" {
		return false, nil, nil
	}
	if s.fail != nil {
		return true, nil, s.fail
	}
	s.calls++
	tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
	tr.Status.Token = fmt.Sprintf("token-%d", s.calls)
	tr.Status.ExpirationTimestamp = metav1.NewTime(s.clk.Now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))
	return true, tr, nil
}

func newTokens(t *testing.T) (*Tokens, *tokenServer, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(epoch)
	srv := &tokenServer{clk: clk}
	client := fake.NewClientset()
	client.PrependReactor("create", "serviceaccounts", srv.react)
	m := NewTokens(client, clk, logr.Discard(), Config{})
	m.jitter = func() time.Duration { return 0 }
	return m, srv, clk
}

func request(seconds int64, podUID types.UID, audiences ...string) *authenticationv1.TokenRequest {
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: podUID},
	}}
}

func token(t *testing.T, m *Tokens, tr *authenticationv1.TokenRequest) string {
	t.Helper()
	got, err := m.GetServiceAccountToken(context.Background(), "ns", "default", tr)
	if err != nil {
		t.Fatalf("GetServiceAccountToken: %v", err)
	}
	return got.Status.Token
}

func TestTokenIsCachedUntil80PercentOfItsLifetime(t *testing.T) {
	m, srv, clk := newTokens(t)
	tr := request(1000, "u1")
	if got := token(t, m, tr); got != "token-1" {
		t.Fatalf("first token %q, want token-1", got)
	}
	clk.Step(799 * time.Second)
	if got := token(t, m, request(1000, "u1")); got != "token-1" {
		t.Fatalf("at 79.9%%: token %q, want the cached token-1", got)
	}
	clk.Step(2 * time.Second)
	if got := token(t, m, tr); got != "token-2" {
		t.Fatalf("at 80.1%%: token %q, want a fresh token-2", got)
	}
	if srv.calls != 2 {
		t.Errorf("%d TokenRequests, want 2", srv.calls)
	}
}

func TestTokenIsRefreshedAfter24Hours(t *testing.T) {
	m, _, clk := newTokens(t)
	tr := request(int64((72 * time.Hour).Seconds()), "u1")
	token(t, m, tr)
	clk.Step(24*time.Hour - time.Second)
	if got := token(t, m, tr); got != "token-1" {
		t.Fatalf("before 24h: %q, want token-1", got)
	}
	clk.Step(2 * time.Second)
	if got := token(t, m, tr); got != "token-2" {
		t.Fatalf("after 24h: %q, want token-2", got)
	}
}

func TestTokensAreCachedPerAudienceExpirationAndBoundObject(t *testing.T) {
	m, srv, _ := newTokens(t)
	for _, tr := range []*authenticationv1.TokenRequest{
		request(3600, "u1"), request(3600, "u1", "vault"), request(7200, "u1"), request(3600, "u2"),
		request(3600, "u1"), request(3600, "u1", "vault"),
	} {
		token(t, m, tr)
	}
	if srv.calls != 4 {
		t.Errorf("%d TokenRequests for 4 distinct requests, want 4", srv.calls)
	}
}

func TestFailedRefreshKeepsTheUnexpiredToken(t *testing.T) {
	m, srv, clk := newTokens(t)
	tr := request(1000, "u1")
	token(t, m, tr)
	srv.fail = errors.New("apiserver down")
	clk.Step(900 * time.Second)
	if got := token(t, m, tr); got != "token-1" {
		t.Fatalf("refresh failed before expiry: %q, want the cached token-1", got)
	}
	clk.Step(101 * time.Second)
	if _, err := m.GetServiceAccountToken(context.Background(), "ns", "default", tr); err == nil {
		t.Fatal("refresh failed after expiry: nil error, want the API's error")
	}
}

func TestDeleteServiceAccountTokenDropsThePodsTokens(t *testing.T) {
	m, srv, _ := newTokens(t)
	token(t, m, request(3600, "u1"))
	token(t, m, request(3600, "u1", "vault"))
	token(t, m, request(3600, "u2"))
	m.DeleteServiceAccountToken("u1")
	m.DeleteServiceAccountToken("u1")
	token(t, m, request(3600, "u2"))
	if srv.calls != 3 {
		t.Fatalf("u2's token was dropped too: %d calls, want 3", srv.calls)
	}
	token(t, m, request(3600, "u1"))
	if srv.calls != 4 {
		t.Fatalf("u1's token still cached: %d calls, want 4", srv.calls)
	}
}

func TestRunDropsExpiredTokens(t *testing.T) {
	m, _, clk := newTokens(t)
	token(t, m, request(30, "u1"))
	token(t, m, request(3600, "u2"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	until(t, "gc ticker", clk.HasWaiters)
	clk.Step(time.Minute)
	until(t, "expired token dropped", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.cache) == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

func TestNilTokenRequestIsRefused(t *testing.T) {
	m, _, _ := newTokens(t)
	if _, err := m.GetServiceAccountToken(context.Background(), "ns", "default", nil); err == nil {
		t.Error("nil TokenRequest: nil error")
	}
}
