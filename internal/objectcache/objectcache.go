package objectcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/internal/atomicfile"
)

// OfflineReporter tells whether the agent runs its checkpointed pods
// without the API server: the API source's Offline.
type OfflineReporter interface {
	// Offline reports whether the API source serves its checkpoint.
	Offline() bool
}

// Config says where the copies are and which pods may have one.
type Config struct {
	// Dir holds one directory of copies per pod. Required.
	Dir string
	// CheckpointDir is the API source's pod checkpoint: a pod has copies
	// only while its <uid>.json is there. Required.
	CheckpointDir string
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case !filepath.IsAbs(c.Dir):
		return fmt.Errorf("objectcache: dir %q must be an absolute path", c.Dir)
	case !filepath.IsAbs(c.CheckpointDir):
		return fmt.Errorf("objectcache: checkpointDir %q must be an absolute path", c.CheckpointDir)
	}
	return nil
}

// Store is the on-disk copies of the objects of checkpointed pods.
type Store struct {
	cfg     Config
	offline OfflineReporter
	clk     clock.Clock
	log     logr.Logger

	mu sync.Mutex
	// saved is the digest of each file as last written or read, by path,
	// so that an unchanged object is not written again.
	saved map[string][sha256.Size]byte
}

// New returns a Store; offline is the API source. It does no I/O.
func New(cfg Config, offline OfflineReporter, clk clock.Clock, log logr.Logger) *Store {
	return &Store{cfg: cfg, offline: offline, clk: clk, log: log.WithName("objectcache"), saved: map[string][sha256.Size]byte{}}
}

// Dir is where the copies are.
func (s *Store) Dir() string { return s.cfg.Dir }

// Offline reports whether the API source serves its checkpoint.
func (s *Store) Offline() bool { return s.offline != nil && s.offline.Offline() }

// entry is one file: the trimmed object and when it was saved.
type entry struct {
	SavedAt metav1.Time     `json:"savedAt"`
	Object  json.RawMessage `json:"object"`
}

// ConfigMapKey, SecretKey and TokenKey name the copies.
func ConfigMapKey(name string) string { return "configmap~" + name }

// SecretKey names the copy of a Secret.
func SecretKey(name string) string { return "secret~" + name }

// TokenKey names the copy of a token of service account sa requested with
// spec (audiences and expiration; the bound pod is the copy's pod).
func TokenKey(sa string, spec authenticationv1.TokenRequestSpec) string {
	auds := slices.Clone(spec.Audiences)
	slices.Sort(auds)
	exp := ""
	if spec.ExpirationSeconds != nil {
		exp = strconv.FormatInt(*spec.ExpirationSeconds, 10)
	}
	sum := sha256.Sum256([]byte(sa + "\x00" + strings.Join(auds, "\x00") + "\x00" + exp))
	return "token~" + sa + "~" + hex.EncodeToString(sum[:8])
}

// trim keeps of obj what a pod's volumes and env read.
func trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, ResourceVersion: o.ResourceVersion},
			Data:       o.Data, BinaryData: o.BinaryData,
		}, nil
	case *corev1.Secret:
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, ResourceVersion: o.ResourceVersion},
			Type:       o.Type, Data: o.Data,
		}, nil
	case *authenticationv1.TokenRequest:
		return &authenticationv1.TokenRequest{Spec: o.Spec, Status: o.Status}, nil
	}
	return nil, fmt.Errorf("objectcache: cannot keep a %T", obj)
}

// Save keeps a copy of obj (a *corev1.ConfigMap, *corev1.Secret or
// *authenticationv1.TokenRequest) under key for pod, if the pod is in the
// checkpoint; an unchanged object is not written again. It does file I/O.
func (s *Store) Save(pod *corev1.Pod, key string, obj any) error {
	path, err := s.path(pod.UID, key)
	if err != nil {
		return err
	}
	t, err := trim(obj)
	if err != nil {
		return err
	}
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode %s of pod %s: %w", key, klog.KObj(pod), err)
	}
	sum := sha256.Sum256(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.saved[path]; ok && prev == sum {
		return nil
	}
	if !s.checkpointed(pod.UID) {
		return nil
	}
	if old, err := s.readLocked(path); err == nil && bytes.Equal(old.Object, data) {
		s.saved[path] = sum
		return nil
	}
	out, err := json.Marshal(entry{SavedAt: metav1.NewTime(s.clk.Now()), Object: data})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create the offline copies of pod %s: %w", klog.KObj(pod), err)
	}
	// MkdirAll leaves existing directories (and the umask) alone.
	for _, d := range []string{s.cfg.Dir, filepath.Dir(path)} {
		if err := os.Chmod(d, 0o700); err != nil {
			return err
		}
	}
	if err := atomicfile.Write(path, out, 0o600); err != nil {
		return fmt.Errorf("save the offline copy %s of pod %s: %w", key, klog.KObj(pod), err)
	}
	s.saved[path] = sum
	s.log.V(4).Info("Saved offline copy", "pod", klog.KObj(pod), "key", key)
	return nil
}

// Load reads the copy under key for pod into obj (a pointer to the type
// saved). found is false when there is none; a copy that cannot be read
// or decoded is an error naming the pod and the file. It does file I/O.
func (s *Store) Load(pod *corev1.Pod, key string, obj any) (savedAt time.Time, found bool, err error) {
	path, err := s.path(pod.UID, key)
	if err != nil {
		return time.Time{}, false, err
	}
	s.mu.Lock()
	e, err := s.readLocked(path)
	s.mu.Unlock()
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("offline copy %s of pod %s (%s) is unreadable: %w", key, klog.KObj(pod), path, err)
	}
	if err := json.Unmarshal(e.Object, obj); err != nil {
		return time.Time{}, false, fmt.Errorf("offline copy %s of pod %s (%s) is unreadable: %w", key, klog.KObj(pod), path, err)
	}
	return e.SavedAt.Time, true, nil
}

// readLocked reads and decodes one file.
func (s *Store) readLocked(path string) (*entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	e := &entry{}
	if err := json.Unmarshal(data, e); err != nil {
		return nil, err
	}
	if len(e.Object) == 0 {
		return nil, errors.New("no object in it")
	}
	return e, nil
}

// Forget removes every copy of the pod. It is idempotent.
func (s *Store) Forget(uid types.UID) error {
	dir, err := s.podDir(uid)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forgetLocked(uid, dir)
}

func (s *Store) forgetLocked(uid types.UID, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the offline copies of pod %s: %w", uid, err)
	}
	for p := range s.saved {
		if strings.HasPrefix(p, dir+string(filepath.Separator)) {
			delete(s.saved, p)
		}
	}
	s.log.V(2).Info("Removed offline copies", "podUID", uid)
	return nil
}

// Prune removes the copies of every pod that is no longer in the
// checkpoint. It does file I/O.
func (s *Store) Prune() error {
	entries, err := os.ReadDir(s.cfg.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the offline copies: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, e := range entries {
		uid := types.UID(e.Name())
		if !e.IsDir() || s.checkpointed(uid) {
			continue
		}
		errs = append(errs, s.forgetLocked(uid, filepath.Join(s.cfg.Dir, e.Name())))
	}
	return errors.Join(errs...)
}

// checkpointed reports whether the pod's checkpoint file exists.
func (s *Store) checkpointed(uid types.UID) bool {
	if !validName(string(uid)) {
		return false
	}
	info, err := os.Stat(filepath.Join(s.cfg.CheckpointDir, string(uid)+".json"))
	return err == nil && info.Mode().IsRegular()
}

func (s *Store) podDir(uid types.UID) (string, error) {
	if !validName(string(uid)) {
		return "", fmt.Errorf("pod UID %q cannot name a directory", uid)
	}
	return filepath.Join(s.cfg.Dir, string(uid)), nil
}

func (s *Store) path(uid types.UID, key string) (string, error) {
	dir, err := s.podDir(uid)
	if err != nil {
		return "", err
	}
	if !validName(key) {
		return "", fmt.Errorf("key %q cannot name a file", key)
	}
	return filepath.Join(dir, key+".json"), nil
}

// validName reports whether s can be one path element.
func validName(s string) bool {
	return s != "" && !strings.HasPrefix(s, ".") && !strings.ContainsAny(s, "/\\\x00")
}
