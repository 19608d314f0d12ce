package cri

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

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
	envs, err := m.containerEnv(pod, c, podIPs)
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

// containerEnv evaluates c's environment in order: a value may refer to
// variables defined before it with $(VAR); valueFrom reads the downward API.
func (m *Manager) containerEnv(pod *corev1.Pod, c *corev1.Container, podIPs []string) ([]*runtimeapi.KeyValue, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("%w: container %q: envFrom is not supported yet", noderuntime.ErrConfig, c.Name)
	}
	var envs []*runtimeapi.KeyValue
	index := map[string]int{}
	for _, e := range c.Env {
		var value string
		switch {
		case e.ValueFrom != nil:
			v, err := m.envValueFrom(pod, c, e, podIPs)
			if err != nil {
				return nil, err
			}
			value = v
		default:
			value = expand(e.Value, envLookup(envs))
		}
		if i, ok := index[e.Name]; ok {
			envs[i].Value = []byte(value)
			continue
		}
		index[e.Name] = len(envs)
		envs = append(envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(value)})
	}
	return envs, nil
}

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

// envValueFrom resolves a valueFrom source; only fieldRef is supported.
func (m *Manager) envValueFrom(pod *corev1.Pod, c *corev1.Container, e corev1.EnvVar, podIPs []string) (string, error) {
	from := e.ValueFrom
	if from.FieldRef == nil {
		kind := "this valueFrom source"
		switch {
		case from.ResourceFieldRef != nil:
			kind = "resourceFieldRef"
		case from.ConfigMapKeyRef != nil:
			kind = "configMapKeyRef"
		case from.SecretKeyRef != nil:
			kind = "secretKeyRef"
		}
		return "", fmt.Errorf("%w: container %q env %q: %s is not supported yet", noderuntime.ErrConfig, c.Name, e.Name, kind)
	}
	v, err := m.fieldRefValue(pod, from.FieldRef.FieldPath, podIPs)
	if err != nil {
		return "", fmt.Errorf("%w: container %q env %q: %w", noderuntime.ErrConfig, c.Name, e.Name, err)
	}
	return v, nil
}

// fieldRefValue reads a downward-API field path of the pod.
func (m *Manager) fieldRefValue(pod *corev1.Pod, fieldPath string, podIPs []string) (string, error) {
	if key, ok := subscript(fieldPath, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(fieldPath, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		if pod.Spec.NodeName != "" {
			return pod.Spec.NodeName, nil
		}
		return m.cfg.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return first(podIPs), nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	case "status.hostIP":
		return first(m.cfg.NodeIPs), nil
	case "status.hostIPs":
		return strings.Join(m.cfg.NodeIPs, ","), nil
	}
	return "", fmt.Errorf("unsupported fieldRef path %q", fieldPath)
}

// subscript parses "<prefix>['key']".
func subscript(fieldPath, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(fieldPath, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
