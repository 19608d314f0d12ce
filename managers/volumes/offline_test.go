package volumes

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/internal/objectcache"
)

// errUnreachable is what reading an object gives with the API server gone.
var errUnreachable = errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")

// switchObjects and switchTokens fail as an unreachable API server while
// down is set.
type switchObjects struct {
	ObjectGetter
	down *atomic.Bool
}

func (s switchObjects) GetConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if s.down.Load() {
		return nil, errUnreachable
	}
	return s.ObjectGetter.GetConfigMap(ctx, ns, name)
}

func (s switchObjects) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	if s.down.Load() {
		return nil, errUnreachable
	}
	return s.ObjectGetter.GetSecret(ctx, ns, name)
}

type switchTokens struct {
	*fakeTokens
	clk  func() time.Time
	down *atomic.Bool
}

func (s switchTokens) GetServiceAccountToken(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	if s.down.Load() {
		return nil, errUnreachable
	}
	out, err := s.fakeTokens.GetServiceAccountToken(ctx, ns, name, tr)
	if err == nil {
		out.Status.ExpirationTimestamp = metav1.NewTime(s.clk().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))
	}
	return out, err
}

// offlineFlag is the API source's Offline.
type offlineFlag struct{ atomic.Bool }

func (f *offlineFlag) Offline() bool { return f.Load() }

// offlineEnv is a testEnv whose API server can go away, with an offline
// store and a checkpoint directory, and whose logs are kept.
type offlineEnv struct {
	*testEnv
	down    atomic.Bool
	offline offlineFlag
	store   *objectcache.Store
	cpDir   string
	mu      sync.Mutex
	logs    []string
}

func newOfflineEnv(t *testing.T) *offlineEnv {
	t.Helper()
	e := &offlineEnv{testEnv: newTestEnv(t)}
	e.cpDir = filepath.Join(e.root, "pod-checkpoints")
	e.store = objectcache.New(objectcache.Config{Dir: filepath.Join(e.root, "pod-checkpoint-objects"), CheckpointDir: e.cpDir},
		&e.offline, e.clk, logr.Discard())
	e.rewire()
	return e
}

// rewire makes the manager use the switchable API and the store; after
// reboot it is a new manager over the same root.
func (e *offlineEnv) rewire() {
	e.m.objects = switchObjects{e.objects, &e.down}
	e.m.tokens = switchTokens{e.tokens, e.clk.Now, &e.down}
	e.m.log = funcr.New(func(prefix, args string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.logs = append(e.logs, args)
	}, funcr.Options{})
	e.m.SetOfflineStore(e.store)
}

// reboot is what a reboot leaves: a new manager, the pod's volumes gone.
func (e *offlineEnv) reboot(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(e.root, "pods", string(pod.UID))); err != nil {
		t.Fatal(err)
	}
	e.m = New(e.objects, e.tokens, fakeNode{}, e.rec, e.clk, nil, logr.Discard(), Config{RootDir: e.root})
	e.m.tmpfs = func(string, int64) error { return nil }
	e.m.tmpfsMounted = func(string) bool { return true }
	e.rewire()
}

func (e *offlineEnv) checkpoint(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if err := os.MkdirAll(e.cpDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.cpDir, string(pod.UID)+".json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e *offlineEnv) logged(substr string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, l := range e.logs {
		if strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

func secretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
}

func configMapVolume(name, cm string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}
}

// runningPod is a checkpointed pod with a secret, a configMap and the
// service-account volume, set up with the API server up.
func (e *offlineEnv) runningPod(t *testing.T) *corev1.Pod {
	t.Helper()
	e.objects.putSecret("ns", "creds", map[string][]byte{"password": []byte("s3cret")})
	e.objects.putConfigMap("ns", "app", map[string]string{"app.conf": "v1"})
	e.objects.putConfigMap("ns", "kube-root-ca.crt", map[string]string{"ca.crt": "CA"})
	pod := newPod("u1", secretVolume("creds", "creds"), configMapVolume("cfg", "app"), kubeAPIAccess())
	e.checkpoint(t, pod)
	e.setUp(t, pod)
	return pod
}

func TestOfflineWithTheObjectsUnreachableTheVolumesAreWrittenFromTheirCopies(t *testing.T) {
	e := newOfflineEnv(t)
	pod := e.runningPod(t)
	e.reboot(t, pod)
	e.down.Store(true)
	e.offline.Store(true)
	e.setUp(t, pod)
	for _, c := range []struct{ volume, file, want string }{
		{"creds", "password", "s3cret"}, {"cfg", "app.conf", "v1"},
		{"kube-api-access-x", "token", "token-0"}, {"kube-api-access-x", "ca.crt", "CA"}, {"kube-api-access-x", "namespace", "ns"},
	} {
		if got := e.read(t, pod, c.volume, c.file); got != c.want {
			t.Errorf("%s/%s = %q offline, want the copy's %q", c.volume, c.file, got, c.want)
		}
	}
	if m := e.modeOf(t, pod, "creds", "password"); m != 0o644 {
		t.Errorf("offline secret file mode %v, want the volume's 0644", m)
	}
	// One line per volume, however often it is set up again.
	e.setUp(t, pod)
	e.m.Resync(context.Background())
	for _, v := range []string{"creds", "cfg", "kube-api-access-x"} {
		if n := e.logged(`"volume"="` + v + `"`); n != 1 {
			t.Errorf("volume %s: %d log lines, want 1 naming the pod and the volume:\n%s", v, n, strings.Join(e.logs, "\n"))
		}
	}
	if n := e.logged(`"pod"={"name"="web-u1" "namespace"="ns"}`); n != 3 {
		t.Errorf("%d log lines name the pod, want 3:\n%s", n, strings.Join(e.logs, "\n"))
	}
	// The copies are private to the agent.
	dir := filepath.Join(e.root, "pod-checkpoint-objects")
	for _, p := range []string{dir, filepath.Join(dir, "u1")} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, want a 0700 directory (err %v)", p, info.Mode(), err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "u1", "*.json"))
	if len(files) != 4 {
		t.Errorf("copies %v, want the secret, the two configMaps and the token", files)
	}
	for _, f := range files {
		if info, err := os.Stat(f); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600 (err %v)", f, info.Mode(), err)
		}
	}
}

func TestOnlineTheCopiesAreIgnoredAndTheObjectsFetched(t *testing.T) {
	e := newOfflineEnv(t)
	pod := e.runningPod(t)
	e.reboot(t, pod)
	// The API server is slow to answer at first but the source is not
	// offline (it listed): the copies must not stand in.
	e.down.Store(true)
	err := e.m.SetUpPod(context.Background(), pod)
	var se *SetUpError
	if !errors.As(err, &se) || !errors.Is(err, ErrNotReady) || len(se.Volumes) != 3 || !errors.Is(se.Causes["creds"], errUnreachable) {
		t.Fatalf("SetUpPod online with the API server unreachable = %v, want the three volumes waiting for it", err)
	}
	// Offline, but the API server answered that the secret is gone: it is.
	e.down.Store(false)
	e.offline.Store(true)
	delete(e.objects.secrets, "ns/creds")
	e.clk.Step(time.Hour) // past every backoff
	if err := e.m.SetUpPod(context.Background(), pod); !errors.As(err, &se) || se.Volumes[0] != "creds" || !strings.Contains(err.Error(), `secret "creds" not found`) {
		t.Fatalf("SetUpPod offline with the secret deleted = %v, want it not found", err)
	}
	// Online again, with new contents: fresh fetches, a new token.
	e.offline.Store(false)
	e.objects.putSecret("ns", "creds", map[string][]byte{"password": []byte("rotated")})
	e.objects.putConfigMap("ns", "app", map[string]string{"app.conf": "v2"})
	e.tokens.renew()
	e.clk.Step(time.Hour)
	e.setUp(t, pod)
	for _, c := range []struct{ volume, file, want string }{{"creds", "password", "rotated"}, {"cfg", "app.conf", "v2"}, {"kube-api-access-x", "token", "token-1"}} {
		if got := e.read(t, pod, c.volume, c.file); got != c.want {
			t.Errorf("%s/%s = %q online, want the API's %q", c.volume, c.file, got, c.want)
		}
	}
	if n := e.logged("offline copy"); n != 0 {
		t.Errorf("%d offline log lines online, want none", n)
	}
	// And the copies follow the API.
	var s corev1.Secret
	if _, found, err := e.store.Load(pod, objectcache.SecretKey("creds"), &s); !found || err != nil || string(s.Data["password"]) != "rotated" {
		t.Errorf("copy of the secret = %q (found %v, err %v), want the rotated one", s.Data["password"], found, err)
	}
}

func TestAnExpiredTokenCopyIsNeverWrittenAndTheVolumeWaitsSayingSo(t *testing.T) {
	e := newOfflineEnv(t)
	pod := e.runningPod(t)
	e.reboot(t, pod)
	e.down.Store(true)
	e.offline.Store(true)
	e.clk.Step(2 * time.Hour) // the 3607s token has expired
	err := e.m.SetUpPod(context.Background(), pod)
	var setUpErr *SetUpError
	if !errors.As(err, &setUpErr) || len(setUpErr.Volumes) != 1 || setUpErr.Volumes[0] != "kube-api-access-x" {
		t.Fatalf("SetUpPod = %v, want the token volume alone not set up", err)
	}
	if msg := setUpErr.Causes["kube-api-access-x"].Error(); !strings.Contains(msg, "expired at") || !strings.Contains(msg, "ns/web-u1") {
		t.Errorf("the volume's error %q does not say the copy expired, naming the pod", msg)
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", "u1", "volumes", pluginProjected, "kube-api-access-x", "token")); !os.IsNotExist(err) {
		t.Errorf("a token file was written from an expired copy (stat: %v)", err)
	}
	e.clk.Step(3 * time.Minute) // past the backoff
	e.m.Resync(context.Background())
	_ = e.m.SetUpPod(context.Background(), pod)
	if n := e.logged("has expired"); n != 1 || e.logged(`"volume"="kube-api-access-x"`) == 0 {
		t.Fatalf("%d log lines say the token expired, want 1 naming the volume:\n%s", n, strings.Join(e.logs, "\n"))
	}
	// Back online: a token is requested again and written.
	e.down.Store(false)
	e.offline.Store(false)
	e.tokens.renew()
	e.clk.Step(3 * time.Minute)
	e.setUp(t, pod)
	if got := e.read(t, pod, "kube-api-access-x", "token"); got != "token-1" {
		t.Fatalf("token = %q after the API server returned, want a new one", got)
	}
}

// jwt is an unsigned JWT whose claims are claims.
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}

func TestTokenExpiryIsTheEarlierOfTheStatusAndTheJWT(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		status time.Time
		token  string
		want   time.Time
	}{
		"the status alone":                     {status: at, token: "opaque", want: at},
		"the JWT alone":                        {token: jwt(`{"exp":1795946400}`), want: time.Unix(1795946400, 0)},
		"the JWT when earlier than the status": {status: at, token: jwt(`{"exp":1764576000}`), want: time.Unix(1764576000, 0)},
		"the status when earlier than the JWT": {status: at, token: jwt(`{"exp":1900000000}`), want: at},
		"none for a JWT without exp":           {token: jwt(`{"sub":"x"}`)},
		"none for garbage":                     {token: "a.%%%.c"},
	} {
		t.Run(name, func(t *testing.T) {
			tr := &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: c.token, ExpirationTimestamp: metav1.NewTime(c.status)}}
			got, known := tokenExpiry(tr)
			if known != !c.want.IsZero() || !got.Equal(c.want) {
				t.Errorf("tokenExpiry = %v, %v; want %v", got, known, c.want)
			}
		})
	}
}

func TestACopyWhoseJWTHasExpiredIsNotWrittenEvenWithoutAStatusExpiry(t *testing.T) {
	e := newOfflineEnv(t)
	pod := e.runningPod(t)
	key := objectcache.TokenKey("default", authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3607))})
	// A copy whose status lost its expiry but whose JWT expired an hour ago.
	past := e.clk.Now().Add(-time.Hour).Unix()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3607))},
		Status: authenticationv1.TokenRequestStatus{Token: jwt(fmt.Sprintf(`{"exp":%d}`, past))}}
	if err := e.store.Save(pod, key, tr); err != nil {
		t.Fatal(err)
	}
	e.reboot(t, pod)
	e.down.Store(true)
	e.offline.Store(true)
	if err := e.m.SetUpPod(context.Background(), pod); err == nil || !strings.Contains(err.Error(), "expired at") {
		t.Fatalf("SetUpPod = %v, want the token volume waiting on its expired copy", err)
	}
}

func TestAPodNotInTheCheckpointGetsNoCopies(t *testing.T) {
	e := newOfflineEnv(t)
	e.objects.putSecret("ns", "creds", map[string][]byte{"password": []byte("s3cret")})
	pod := newPod("static", secretVolume("creds", "creds"))
	e.setUp(t, pod)
	if _, err := os.Stat(filepath.Join(e.root, "pod-checkpoint-objects", "static")); !os.IsNotExist(err) {
		t.Fatalf("a pod not in the checkpoint has offline copies (stat: %v)", err)
	}
	e.reboot(t, pod)
	e.down.Store(true)
	e.offline.Store(true)
	var se *SetUpError
	if err := e.m.SetUpPod(context.Background(), pod); !errors.As(err, &se) || !errors.Is(se.Causes["creds"], errUnreachable) {
		t.Fatalf("SetUpPod = %v, want it waiting for the API server", err)
	}
}

func TestTheCopiesGoWithThePodsCheckpointAndItsVolumes(t *testing.T) {
	e := newOfflineEnv(t)
	pod := e.runningPod(t)
	other := newPod("u2", secretVolume("creds", "creds"))
	e.checkpoint(t, other)
	e.setUp(t, other)
	dir := filepath.Join(e.root, "pod-checkpoint-objects")
	// The pod left the API server: its checkpoint file went, housekeeping
	// removes its copies.
	if err := os.Remove(filepath.Join(e.cpDir, "u1.json")); err != nil {
		t.Fatal(err)
	}
	if err := e.m.CleanupPods(context.Background(), func(types.UID) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "u1")); !os.IsNotExist(err) {
		t.Fatalf("copies of a pod gone from the checkpoint still there (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "u2")); err != nil {
		t.Fatalf("copies of a checkpointed pod removed: %v", err)
	}
	// A pod whose volumes are torn down needs no copies either.
	if err := e.m.TearDownPod(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "u2")); !os.IsNotExist(err) {
		t.Fatalf("copies of a torn-down pod still there (stat: %v)", err)
	}
	_ = pod
}

func TestACorruptedCopyIsAClearErrorAndThePodWaits(t *testing.T) {
	e := newOfflineEnv(t)
	pod := e.runningPod(t)
	path := filepath.Join(e.root, "pod-checkpoint-objects", "u1", objectcache.SecretKey("creds")+".json")
	if err := os.WriteFile(path, []byte(`{"savedAt":"2026-12-01T09:00:00Z","object":{"data":`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.reboot(t, pod)
	e.down.Store(true)
	e.offline.Store(true)
	err := e.m.SetUpPod(context.Background(), pod)
	var se *SetUpError
	if !errors.As(err, &se) || !errors.Is(err, ErrNotReady) || len(se.Volumes) != 1 || se.Volumes[0] != "creds" {
		t.Fatalf("SetUpPod with a corrupted copy = %v, want the secret volume alone waiting", err)
	}
	msg := se.Causes["creds"].Error()
	for _, want := range []string{`volume "creds"`, "ns/web-u1", "unusable", path} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if ev := e.rec.list(); len(ev) == 0 || !strings.Contains(ev[len(ev)-1], "FailedMount") {
		t.Errorf("events %v, want a FailedMount", ev)
	}
}
