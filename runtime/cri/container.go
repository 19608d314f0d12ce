package cri

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodekit/nodekit/managers/env"
	"github.com/nodekit/nodekit/managers/nodeip"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// containerLogPath is the log file of one container instance, relative to
// the sandbox's log directory.
func containerLogPath(name string, restartCount int) string {
	return filepath.Join(name, strconv.Itoa(restartCount)+".log")
}

// containerConfig builds the CreateContainer request for c. imageRef is the
// image as the runtime resolved it; podIPs are the pod's current addresses.
// It asks the runtime for the image's user (for runAsNonRoot and a default
// runAsUser), and returns an error wrapping runtime.ErrConfig when the spec
// uses what nodekit cannot provide yet or breaks runAsNonRoot.
func (m *Manager) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, imageRef string, restartCount int, podIPs []string) (*runtimeapi.ContainerConfig, error) {
	if err := checkRestartRules(c); err != nil {
		return nil, err
	}
	uid, username, err := m.imageUser(ctx, imageRef)
	if err != nil {
		return nil, fmt.Errorf("%w: container %q: %w", noderuntime.ErrConfig, c.Name, err)
	}
	if err := verifyRunAsNonRoot(pod, c, uid, username); err != nil {
		return nil, err
	}
	sc, err := m.securityContext(pod, c, uid, username)
	if err != nil {
		return nil, err
	}
	envs, err := m.containerEnv(ctx, pod, c, podIPs)
	if err != nil {
		return nil, err
	}
	lookup := envLookup(envs)
	command := make([]string, 0, len(c.Command))
	for _, s := range c.Command {
		command = append(command, expand(s, lookup))
	}
	args := make([]string, 0, len(c.Args))
	for _, s := range c.Args {
		args = append(args, expand(s, lookup))
	}
	annotations, err := containerAnnotations(pod, c, restartCount)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", noderuntime.ErrConfig, err)
	}
	return &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: uint32(restartCount)},
		Image:       &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image, RuntimeHandler: m.cfg.RuntimeHandler},
		Command:     command,
		Args:        args,
		WorkingDir:  c.WorkingDir,
		Envs:        envs,
		Labels:      m.containerLabels(pod, c),
		Annotations: annotations,
		LogPath:     containerLogPath(c.Name, restartCount),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       m.containerResources(pod, c),
			SecurityContext: sc,
		},
	}, nil
}

// EnvSource computes a container's environment, API-backed values
// included, as the kubelet's makeEnvironmentVariables does. nodekit gives
// the manager an env.Builder that reads ConfigMaps, Secrets and Services
// through the node's client; without one the manager uses an env.Builder
// with no API server. Implementations must be safe for concurrent use.
type EnvSource interface {
	// ContainerEnv returns the environment of container c of pod, whose
	// addresses are podIPs. An error names what is missing.
	ContainerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIPs []string) ([]corev1.EnvVar, error)
}

// SetEnvSource sets where container environments come from; nil restores
// the default (no API-backed values). Safe for concurrent use.
func (m *Manager) SetEnvSource(s EnvSource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.envSource = s
}

// SetNodeIPs makes the default environment (used while no EnvSource is
// set) read the node's addresses from src instead of Config.NodeIPs, so
// that status.hostIP agrees with the pod and node statuses. Safe for
// concurrent use.
func (m *Manager) SetNodeIPs(src nodeip.Source) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodeIPs = src
}

func (m *Manager) envSourceOrDefault() EnvSource {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.envSource == nil {
		return env.New(env.Deps{NodeIPs: m.nodeIPs}, env.Config{NodeIPs: m.cfg.NodeIPs, NodeName: m.cfg.NodeName})
	}
	return m.envSource
}

// containerEnv asks the EnvSource for c's environment. An error is a
// config error (CreateContainerConfigError) with the source's message.
func (m *Manager) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIPs []string) ([]*runtimeapi.KeyValue, error) {
	vars, err := m.envSourceOrDefault().ContainerEnv(ctx, pod, c, podIPs)
	if err != nil {
		return nil, &configError{err}
	}
	envs := make([]*runtimeapi.KeyValue, 0, len(vars))
	for _, v := range vars {
		envs = append(envs, &runtimeapi.KeyValue{Key: v.Name, Value: []byte(v.Value)})
	}
	return envs, nil
}

// configError is a config error whose message is its cause's: it wraps
// runtime.ErrConfig, so the container waits with reason
// CreateContainerConfigError and the cause as message, as the kubelet's.
type configError struct{ err error }

func (e *configError) Error() string   { return e.err.Error() }
func (e *configError) Unwrap() []error { return []error{noderuntime.ErrConfig, e.err} }

// envLookup finds a variable among envs.
func envLookup(envs []*runtimeapi.KeyValue) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, kv := range envs {
			if kv.Key == name {
				return string(kv.Value), true
			}
		}
		return "", false
	}
}
