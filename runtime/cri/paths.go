package cri

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// Paths on the host are built from outside input: pod UIDs, names and
// namespaces, container names and volume names come from manifests and
// the API server. Every such path is built by pathUnder, so a value that
// is not one plain path element ("x/../../etc") is an error where the path
// is built, and nothing is created, read or removed outside RootDir.

// checkPathElement returns an error unless elem is one clean path element:
// not empty, not "." or "..", without "/" and without NUL.
func checkPathElement(elem string) error {
	switch {
	case elem == "":
		return errors.New("an empty path element")
	case elem == "." || elem == "..":
		return fmt.Errorf("%q is not a path element", elem)
	case strings.ContainsAny(elem, "/\x00"):
		return fmt.Errorf("%q is not a single path element", elem)
	}
	return nil
}

// pathUnder joins elems below root. Each element must be one clean path
// element, and the result must stay below root; otherwise it returns an
// error naming the element.
func pathUnder(root string, elems ...string) (string, error) {
	if root == "" {
		return "", errors.New("no root directory to build a path in")
	}
	for _, e := range elems {
		if err := checkPathElement(e); err != nil {
			return "", err
		}
	}
	root = filepath.Clean(root)
	p := filepath.Join(append([]string{root}, elems...)...)
	if len(elems) > 0 && (p == root || !within(p, root)) {
		return "", fmt.Errorf("%s leaves %s", p, root)
	}
	return p, nil
}

// podDir is <RootDir>/pods/<uid>: the pod's volumes and per-container
// files. A UID that is not one path element is an error.
func (m *Manager) podDir(uid types.UID) (string, error) {
	p, err := pathUnder(m.cfg.RootDir, "pods", string(uid))
	if err != nil {
		return "", fmt.Errorf("directory of pod UID %q: %w", uid, err)
	}
	return p, nil
}

// podLogDir is where the pod's container logs go:
// <PodLogsDir>/<namespace>_<name>_<uid> as the kubelet's, which must be one path element.
func (m *Manager) podLogDir(namespace, name string, uid types.UID) (string, error) {
	p, err := pathUnder(m.cfg.PodLogsDir, namespace+"_"+name+"_"+string(uid))
	if err != nil {
		return "", fmt.Errorf("log directory of pod %s/%s (UID %q): %w", namespace, name, uid, err)
	}
	return p, nil
}

// mkdirBelow creates dir/elem (and dir), elem being one path element: a
// container's log directory in its sandbox's.
func mkdirBelow(dir, elem string) error {
	p, err := pathUnder(dir, elem)
	if err != nil {
		return fmt.Errorf("directory %q in %s: %w", elem, dir, err)
	}
	return mkdirAll(p)
}

// readContainerLogDir lists the log directory of container name of pod.
func (m *Manager) readContainerLogDir(namespace, name string, uid types.UID, container string) ([]os.DirEntry, error) {
	dir, err := m.podLogDir(namespace, name, uid)
	if err == nil {
		dir, err = pathUnder(dir, container)
	}
	if err != nil {
		return nil, err
	}
	return os.ReadDir(dir)
}

// containerTerminationMessage is terminationMessage with the log directory
// of the container's pod, as its labels name the pod. When that directory
// cannot be built, a log path relative to it is not read.
func (m *Manager) containerTerminationMessage(s *runtimeapi.ContainerStatus) string {
	l := s.GetLabels()
	dir, err := m.podLogDir(l[noderuntime.LabelPodNamespace], l[noderuntime.LabelPodName], podUIDOf(l))
	if err != nil && !filepath.IsAbs(s.GetLogPath()) {
		s = proto.Clone(s).(*runtimeapi.ContainerStatus)
		s.LogPath = ""
	}
	return terminationMessage(s, dir)
}
