package cri

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crierrors "k8s.io/cri-api/pkg/errors"
)

const (
	// logLinkSuffix ends every name in ContainerLogsDir.
	logLinkSuffix = ".log"
	// maxFileNameLen is the longest file name ext4 takes; longer link
	// names are cut, as the kubelet cuts them.
	maxFileNameLen = 255
	// minContainerIDLen is the shortest container ID prefix a runtime
	// resolves, below which a link's name is not one of ours.
	minContainerIDLen = 6
)

// logLinkPath is the link in ContainerLogsDir to the log of container
// containerID: <pod>_<namespace>_<container>-<containerID>.log, its name
// cut to 255 characters, the kubelet's name for it.
func (m *Manager) logLinkPath(podName, namespace, containerName, containerID string) string {
	name := fmt.Sprintf("%s_%s_%s-%s", podName, namespace, containerName, containerID)
	if len(name) > maxFileNameLen-len(logLinkSuffix) {
		name = name[:maxFileNameLen-len(logLinkSuffix)]
	}
	return filepath.Join(m.cfg.ContainerLogsDir, name+logLinkSuffix)
}

// linkContainerLog makes the ContainerLogsDir link to a started container's
// log file. As the kubelet, it makes none when the runtime wrote no log file
// (the link would dangle), and a failure is only logged: the container runs.
func (m *Manager) linkContainerLog(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig, containerID string) {
	target := filepath.Join(sb.GetLogDirectory(), c.GetLogPath())
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		return
	}
	link := m.logLinkPath(sb.GetMetadata().GetName(), sb.GetMetadata().GetNamespace(), c.GetMetadata().GetName(), containerID)
	err := os.MkdirAll(m.cfg.ContainerLogsDir, 0o755)
	if err == nil {
		err = os.Symlink(target, link)
	}
	if err != nil {
		m.log.Error(err, "failed to link container log", "path", link, "containerID", containerID, "containerLogPath", target)
	}
}

// removeLogLink removes the ContainerLogsDir link of a removed container.
func (m *Manager) removeLogLink(p *gcPod, c *runtimeapi.Container) error {
	if p.name == "" || c.GetMetadata().GetName() == "" {
		return nil
	}
	link := m.logLinkPath(p.name, p.namespace, c.GetMetadata().GetName(), c.GetId())
	if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove log link of container %q of pod %s: %w", c.GetMetadata().GetName(), podFullName(p.name, p.namespace, p.uid), err)
	}
	return nil
}

// removeDeadLogLinks removes the links in ContainerLogsDir whose log file
// is gone, unless their container still runs (its log is briefly missing
// while it is rotated), as the kubelet's container GC does. Only symbolic
// links are removed: the directory may hold other files.
func (m *Manager) removeDeadLogLinks(ctx context.Context) {
	links, _ := filepath.Glob(filepath.Join(m.cfg.ContainerLogsDir, "*"+logLinkSuffix))
	for _, link := range links {
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if _, err := os.Stat(link); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if id := containerIDOfLogLink(link); id != "" {
			resp, err := m.rs.ContainerStatus(ctx, id, false)
			if err != nil && !crierrors.IsNotFound(err) {
				m.log.V(4).Info("cannot read the status of a dead log link's container", "path", link, "err", err.Error())
			}
			if err == nil && resp.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
				continue
			}
		}
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.log.Error(err, "failed to remove dead container log link", "path", link)
			continue
		}
		m.log.V(4).Info("removed dead container log link", "path", link)
	}
}

// containerIDOfLogLink is the container ID in a link's name, or "" when
// the name holds none.
func containerIDOfLogLink(link string) string {
	name := strings.TrimSuffix(filepath.Base(link), logLinkSuffix)
	i := strings.LastIndex(name, "-")
	if i < 0 || len(name)-i-1 < minContainerIDLen {
		return ""
	}
	return name[i+1:]
}
