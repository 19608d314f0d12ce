package nodekit

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/runtime/cri"
)

// epochForTests is where the fake clocks of these tests start.
var epochForTests = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestNodeIPsForTheDownwardAPI(t *testing.T) {
	var cfg Config
	if got := cfg.nodeIPConfig().NodeIPs; got != nil {
		t.Errorf("no node IP configured: %v, want none (detection)", got)
	}
	cfg.Agent.NodeIP = "192.0.2.1"
	if got := cfg.nodeIPConfig().NodeIPs; !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Errorf("with --node-ip: %v", got)
	}
	cfg.CRI.NodeIPs = []string{"192.0.2.2", "2001:db8::2"}
	if got := cfg.nodeIPConfig().NodeIPs; !slices.Equal(got, cfg.CRI.NodeIPs) {
		t.Errorf("with the runtime's NodeIPs: %v", got)
	}
}

func TestPullSecretsComeFromTheObjectCacheWhenThereIsOne(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "reg"}}
	client := fake.NewClientset(secret)
	m := objects.NewWatchManager(client, clocktesting.NewFakeClock(epochForTests), logr.Discard(), objects.Config{})
	got := pullSecrets(objectsParams{Client: client, Objects: m})
	if got != cri.SecretGetter(m) {
		t.Fatalf("SecretGetter = %T, want the object cache", got)
	}
	if got, err := got.GetSecret(context.Background(), "ns", "reg"); err != nil || got.Name != "reg" {
		t.Fatalf("GetSecret = %v, %v", got, err)
	}
}
