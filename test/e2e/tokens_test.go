//go:build e2e

package e2e

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/objects"
)

// TestTokenManagerGetsPodBoundTokensWithNodeCredentials checks the token
// manager against the real API server: with the node's own credentials
// (NodeRestriction), a token bound to a pod on the node is issued for the
// pod's service account, the TokenReview shows the pod, and a second Get
// is served from the cache.
func TestTokenManagerGetsPodBoundTokensWithNodeCredentials(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	ctx := context.Background()
	// NodeRestriction lets a node request only the audiences the pod's own
	// token volumes name (here the API server's default audience).
	spec := h.apiPod(ns, "tokened", 2)
	spec.Spec.Volumes = []corev1.Volume{{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrTo(int64(3600))}}},
	}}}}
	pod, err := c.admin.CoreV1().Pods(ns).Create(ctx, spec, metav1.CreateOptions{})
	createOrFail(t, err)

	rc, err := clientcmd.BuildConfigFromFlags("", h.kubeconfig)
	createOrFail(t, err)
	node, err := kubernetes.NewForConfig(rc)
	createOrFail(t, err)
	m := objects.NewTokens(node, clock.RealClock{}, logr.Discard(), objects.Config{})
	seconds := int64(3600)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	tr, err := m.GetServiceAccountToken(ctx, ns, "default", req)
	if err != nil {
		t.Fatalf("GetServiceAccountToken with node credentials: %v", err)
	}
	again, err := m.GetServiceAccountToken(ctx, ns, "default", req)
	if err != nil || again.Status.Token != tr.Status.Token {
		t.Errorf("second Get: %v; want the cached token", err)
	}
	review, err := c.admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	createOrFail(t, err)
	st := review.Status
	if !st.Authenticated || st.User.Username != "system:serviceaccount:"+ns+":default" {
		t.Fatalf("TokenReview: %+v", st)
	}
	if got := st.User.Extra["authentication.kubernetes.io/pod-name"]; len(got) != 1 || got[0] != pod.Name {
		t.Errorf("token bound to pod %v, want %s", got, pod.Name)
	}
	m.DeleteServiceAccountToken(pod.UID)
	fresh, err := m.GetServiceAccountToken(ctx, ns, "default", req)
	if err != nil || fresh.Status.Token == tr.Status.Token {
		t.Errorf("after DeleteServiceAccountToken: %v; want a new token", err)
	}
}
