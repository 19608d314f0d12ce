package objectcache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

type offlineFlag bool

func (f offlineFlag) Offline() bool { return bool(f) }

func newStore(t *testing.T) (*Store, *clocktesting.FakeClock, string) {
	t.Helper()
	root := t.TempDir()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	cfg := Config{Dir: filepath.Join(root, "objects"), CheckpointDir: filepath.Join(root, "pod-checkpoints")}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.CheckpointDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return New(cfg, offlineFlag(true), clk, logr.Discard()), clk, root
}

func pod(uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + uid, Namespace: "ns", UID: types.UID("u-" + uid)}}
}

func checkpoint(t *testing.T, root string, p *corev1.Pod) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "pod-checkpoints", string(p.UID)+".json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestASavedSecretLoadsTrimmedWithItsTime(t *testing.T) {
	s, clk, root := newStore(t)
	p := pod("1")
	checkpoint(t, root, p)
	in := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "ns", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"k": []byte("v")}}
	if err := s.Save(p, SecretKey("creds"), in); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "objects", "u-1", "secret~creds.json")
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("copy %s: %v (err %v), want mode 0600", path, info, err)
	}
	clk.Step(time.Minute)
	// Unchanged: not written again.
	if err := s.Save(p, SecretKey("creds"), in); err != nil {
		t.Fatal(err)
	}
	var out corev1.Secret
	savedAt, found, err := s.Load(p, SecretKey("creds"), &out)
	if err != nil || !found || !savedAt.Equal(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("Load = %v, %v, %v; want the copy of 09:00", savedAt, found, err)
	}
	if string(out.Data["k"]) != "v" || out.Type != corev1.SecretTypeOpaque || out.Labels != nil || out.ManagedFields != nil {
		t.Fatalf("copy = %+v, want the type and data only", out)
	}
}

func TestOnlyCheckpointedPodsGetCopiesAndPruneFollowsTheCheckpoint(t *testing.T) {
	s, _, root := newStore(t)
	in, out := pod("in"), pod("out")
	checkpoint(t, root, in)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"k": "v"}}
	for _, p := range []*corev1.Pod{in, out} {
		if err := s.Save(p, ConfigMapKey("app"), cm); err != nil {
			t.Fatal(err)
		}
	}
	if _, found, _ := s.Load(out, ConfigMapKey("app"), &corev1.ConfigMap{}); found {
		t.Fatal("a pod not in the checkpoint got a copy")
	}
	if _, found, _ := s.Load(in, ConfigMapKey("app"), &corev1.ConfigMap{}); !found {
		t.Fatal("a checkpointed pod got no copy")
	}
	if err := s.Prune(); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := s.Load(in, ConfigMapKey("app"), &corev1.ConfigMap{}); !found {
		t.Fatal("Prune removed the copy of a checkpointed pod")
	}
	if err := os.Remove(filepath.Join(root, "pod-checkpoints", "u-in.json")); err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "objects", "u-in")); !os.IsNotExist(err) {
		t.Fatalf("Prune left the copies of a pod gone from the checkpoint (stat: %v)", err)
	}
}

func TestTokenKeysDifferByAudienceAndExpiration(t *testing.T) {
	exp := int64(3600)
	a := TokenKey("default", authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp})
	b := TokenKey("default", authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}, ExpirationSeconds: &exp})
	if a == b || !strings.HasPrefix(a, "token~default~") || !validName(a) {
		t.Fatalf("keys %q and %q, want two valid, different names", a, b)
	}
}

func TestACorruptedCopyIsAnErrorNamingThePodAndFile(t *testing.T) {
	s, _, root := newStore(t)
	p := pod("1")
	dir := filepath.Join(root, "objects", "u-1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "configmap~app.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, found, err := s.Load(p, ConfigMapKey("app"), &corev1.ConfigMap{})
	if found || err == nil || !strings.Contains(err.Error(), "ns/p-1") || !strings.Contains(err.Error(), "configmap~app.json") {
		t.Fatalf("Load of a corrupted copy = %v, %v; want an error naming the pod and the file", found, err)
	}
}
