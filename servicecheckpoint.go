package nodekit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/internal/atomicfile"
	"github.com/nodekit/nodekit/managers/objects"
	"github.com/nodekit/nodekit/sources/apiserver"
)

// serviceCheckpointsDir is where the service checkpoint is, under RootDir.
const serviceCheckpointsDir = "service-checkpoints"

// offlineReporter is the API pod source's Offline: true while it serves
// its pod checkpoint because the API server did not answer at start.
type offlineReporter interface{ Offline() bool }

// checkpointedServices is the ServiceLister of the service environment
// when the pod checkpoint is on. Once the cluster's Services are listed, it
// serves them and saves those of every namespace it is asked for (the
// default namespace and each pod's) as dir/<namespace>.json; while the API
// source serves its checkpoint and the Services were not listed yet, it
// serves those saved copies, so that a pod run from the checkpoint gets the
// service environment it had (KUBERNETES_SERVICE_HOST and the links)
// instead of failing to start as "services have not yet been read". Safe
// for concurrent use.
type checkpointedServices struct {
	inner   objects.ServiceLister
	offline offlineReporter
	dir     string
	log     logr.Logger

	mu    sync.Mutex
	saved map[string][]byte
}

var _ objects.ServiceLister = (*checkpointedServices)(nil)

// HasSynced implements objects.ServiceLister: the cluster's Services were
// listed, or the API source is offline (the saved copies stand in).
func (s *checkpointedServices) HasSynced() bool {
	return s.inner.HasSynced() || s.offline.Offline()
}

// ListServices implements objects.ServiceLister.
func (s *checkpointedServices) ListServices(namespace string) ([]*corev1.Service, error) {
	if s.inner.HasSynced() || !s.offline.Offline() {
		list, err := s.inner.ListServices(namespace)
		if err == nil && s.inner.HasSynced() {
			if err := s.save(namespace, list); err != nil {
				s.log.Error(err, "Failed to checkpoint the services of a namespace", "namespace", namespace)
			}
		}
		return list, err
	}
	return s.load(namespace)
}

func (s *checkpointedServices) path(namespace string) (string, error) {
	if namespace == "" || strings.ContainsAny(namespace, `/\.`) {
		return "", fmt.Errorf("namespace %q cannot name a checkpoint file", namespace)
	}
	return filepath.Join(s.dir, namespace+".json"), nil
}

// save writes the namespace's Services atomically when they changed.
func (s *checkpointedServices) save(namespace string, list []*corev1.Service) error {
	path, err := s.path(namespace)
	if err != nil {
		return err
	}
	data, err := json.Marshal(list)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saved == nil {
		s.saved = map[string][]byte{}
	}
	if bytes.Equal(s.saved[namespace], data) {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return err
	}
	s.saved[namespace] = data
	return nil
}

// load reads the saved Services of namespace; none were saved is no error.
func (s *checkpointedServices) load(namespace string) ([]*corev1.Service, error) {
	path, err := s.path(namespace)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the checkpointed services of %s: %w", namespace, err)
	}
	var list []*corev1.Service
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("decode the checkpointed services of %s: %w", namespace, err)
	}
	// save writes only the namespace's listed Services: a null entry or
	// another namespace's Service means the file was not written by it.
	for i, svc := range list {
		if svc == nil || svc.Namespace != namespace {
			return nil, fmt.Errorf("the checkpointed services of %s (%s) hold at %d a service of another namespace or none", namespace, path, i)
		}
	}
	return list, nil
}

type serviceCheckpointParams struct {
	fx.In

	Cfg       Config
	Services  objects.ServiceLister `optional:"true"`
	APISource *apiserver.Source     `optional:"true"`
	Log       logr.Logger
}

// serviceCheckpoint is the service checkpoint (RootDir/service-checkpoints)
// over the cluster's Services, nil without them, without an API source or
// with the pod checkpoint off.
func serviceCheckpoint(p serviceCheckpointParams) *checkpointedServices {
	if p.Services == nil || isNil(p.Services) || p.APISource == nil || p.Cfg.APISource.CheckpointDir == "" {
		return nil
	}
	return &checkpointedServices{
		inner: p.Services, offline: p.APISource, log: p.Log.WithName("services"),
		dir: filepath.Join(p.Cfg.RootDir, serviceCheckpointsDir),
	}
}

// prune removes the saved Services of every namespace not in keep, but
// not those written since before (keep may miss a pod checkpointed since
// it was read). It does file I/O.
func (s *checkpointedServices) prune(keep map[string]bool, before time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the service checkpoint: %w", err)
	}
	var errs []error
	for _, e := range entries {
		ns, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || keep[ns] {
			continue
		}
		if info, err := e.Info(); err != nil || !info.ModTime().Before(before) {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove the checkpointed services of %s: %w", ns, err))
			continue
		}
		delete(s.saved, ns)
		s.log.V(2).Info("Removed the checkpointed services of a namespace no checkpointed pod is in", "namespace", ns)
	}
	return errors.Join(errs...)
}
