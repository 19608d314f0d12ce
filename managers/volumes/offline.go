package volumes

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/internal/objectcache"
)

// OfflineStore keeps on disk the ConfigMaps, Secrets and tokens the
// volumes of each checkpointed pod were made of, for an agent that starts
// with the API server away (internal/objectcache implements it; nodekit
// sets one only with its object checkpoint, an opt-in, on). Keys are
// objectcache.ConfigMapKey, SecretKey and TokenKey. It must be safe for
// concurrent use.
type OfflineStore interface {
	// Offline reports whether the agent runs its checkpointed pods
	// without the API server (the API source serves its checkpoint).
	Offline() bool
	// Save keeps a copy of obj for pod under key; a pod that is not in
	// the pod checkpoint gets none.
	Save(pod *corev1.Pod, key string, obj any) error
	// Load reads the copy under key into obj; found is false without one.
	Load(pod *corev1.Pod, key string, obj any) (savedAt time.Time, found bool, err error)
	// Forget removes the pod's copies.
	Forget(uid types.UID) error
	// Prune removes the copies of pods no longer in the checkpoint.
	Prune() error
}

// SetOfflineStore makes the manager keep the objects and tokens of
// checkpointed pods' configMap, secret and projected volumes in s, and
// use those copies while s reports Offline and an object cannot be
// fetched: after a reboot with the API server away, the volumes are
// written again from the last good contents instead of the pod waiting.
// Call it before the first SetUpPod; nil turns it off.
func (m *VolumeManager) SetOfflineStore(s OfflineStore) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offline = s
}

func (m *VolumeManager) offlineStore() OfflineStore {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.offline
}

// unanswered reports whether err is a failure to reach the API server, not
// an answer from it (a NotFound, a Forbidden): only then may an offline
// copy stand in.
func unanswered(err error) bool {
	var st apierrors.APIStatus
	return !errors.As(err, &st) && !errors.Is(err, context.Canceled)
}

// source is one volume of a pod whose objects are being read, for the
// offline copies and their log lines.
type source struct {
	pod    *corev1.Pod
	volume string
}

// getConfigMap reads a ConfigMap for a volume, saving a copy or, offline,
// falling back to it.
func (m *VolumeManager) getConfigMap(ctx context.Context, src source, name string) (*corev1.ConfigMap, error) {
	cm, err := m.objects.GetConfigMap(ctx, src.pod.Namespace, name)
	key := objectcache.ConfigMapKey(name)
	if err == nil {
		m.saveOffline(src, key, cm)
		return cm, nil
	}
	out := &corev1.ConfigMap{}
	if ok, lerr := m.loadOffline(src, key, err, out); !ok {
		return nil, lerr
	}
	return out, nil
}

// getSecret is getConfigMap for Secrets.
func (m *VolumeManager) getSecret(ctx context.Context, src source, name string) (*corev1.Secret, error) {
	s, err := m.objects.GetSecret(ctx, src.pod.Namespace, name)
	key := objectcache.SecretKey(name)
	if err == nil {
		m.saveOffline(src, key, s)
		return s, nil
	}
	out := &corev1.Secret{}
	if ok, lerr := m.loadOffline(src, key, err, out); !ok {
		return nil, lerr
	}
	return out, nil
}

// getToken requests a token for a volume, saving a copy or, offline,
// falling back to it. A copy that has expired (its TokenRequest status's
// expirationTimestamp or its JWT's exp) is never written: it counts as
// missing, and the volume waits for the API server, logged once naming
// the pod and the volume.
func (m *VolumeManager) getToken(ctx context.Context, src source, sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	got, err := m.tokens.GetServiceAccountToken(ctx, src.pod.Namespace, sa, tr)
	key := objectcache.TokenKey(sa, tr.Spec)
	if err == nil {
		m.saveOffline(src, key, got)
		return got, nil
	}
	out := &authenticationv1.TokenRequest{}
	if ok, lerr := m.loadOffline(src, key, err, out); !ok {
		return nil, lerr
	}
	if exp, known := tokenExpiry(out); known && !m.clk.Now().Before(exp) {
		if m.firstTime(src, key+"/expired") {
			m.log.Info("The offline copy of the service-account token has expired; the volume waits for the API server",
				"pod", klog.KObj(src.pod), "volume", src.volume, "serviceAccount", sa, "expired", exp.UTC().Format(time.RFC3339))
		}
		return nil, fmt.Errorf("the API server is unreachable and the offline copy of the service-account token of %s for volume %q of pod %s expired at %s: %w",
			sa, src.volume, klog.KObj(src.pod), exp.UTC().Format(time.RFC3339), err)
	}
	return out, nil
}

// tokenExpiry is when a token expires: the earlier of its TokenRequest
// status's expirationTimestamp and its JWT's exp claim; known is false
// when neither says (a token that does not expire).
func tokenExpiry(tr *authenticationv1.TokenRequest) (exp time.Time, known bool) {
	exp = tr.Status.ExpirationTimestamp.Time
	if t, ok := jwtExpiry(tr.Status.Token); ok && (exp.IsZero() || t.Before(exp)) {
		exp = t
	}
	return exp, !exp.IsZero()
}

// jwtExpiry reads the exp claim of a JWT without checking its signature
// (the token is only being kept or dropped); ok is false when token is
// not a JWT with one.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == "" {
		return time.Time{}, false
	}
	secs, err := claims.Exp.Float64()
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(int64(secs), 0), true
}

// saveOffline keeps a copy of a fetched object; a failure is logged, the
// volume is set up all the same.
func (m *VolumeManager) saveOffline(src source, key string, obj any) {
	s := m.offlineStore()
	if s == nil {
		return
	}
	if err := s.Save(src.pod, key, obj); err != nil {
		m.log.Error(err, "Failed to save the offline copy of a volume's object", "pod", klog.KObj(src.pod), "volume", src.volume, "object", key)
	}
	m.mu.Lock()
	if st := m.pods[src.pod.UID]; st != nil {
		for tag := range st.offlineLogged {
			if tag == src.volume+"/offline" || tag == src.volume+"/"+key+"/expired" {
				delete(st.offlineLogged, tag)
			}
		}
	}
	m.mu.Unlock()
}

// firstTime reports whether tag is logged for the first time for the
// pod's volume.
func (m *VolumeManager) firstTime(src source, tag string) bool {
	tag = src.volume + "/" + tag
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.pods[src.pod.UID]
	if st == nil || st.offlineLogged[tag] {
		return false
	}
	st.offlineLogged[tag] = true
	return true
}

// loadOffline reads the copy under key when the agent is offline and
// fetchErr says the API server did not answer. ok is false when no copy
// stands in; err is then fetchErr, or why the copy is unusable, naming
// the pod and volume. The first time a volume is served from its copies
// is logged.
func (m *VolumeManager) loadOffline(src source, key string, fetchErr error, obj any) (ok bool, err error) {
	s := m.offlineStore()
	if s == nil || !unanswered(fetchErr) || !s.Offline() {
		return false, fetchErr
	}
	savedAt, found, err := s.Load(src.pod, key, obj)
	if err != nil {
		return false, fmt.Errorf("the API server is unreachable and the offline copy for volume %q of pod %s is unusable: %w", src.volume, klog.KObj(src.pod), err)
	}
	if !found {
		return false, fetchErr
	}
	if m.firstTime(src, "offline") {
		m.log.Info("API server unreachable; setting up the volume from its offline copy",
			"pod", klog.KObj(src.pod), "volume", src.volume, "object", key, "saved", savedAt.UTC().Format(time.RFC3339), "err", fetchErr)
	}
	return true, nil
}
