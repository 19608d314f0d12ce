package env

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nodekit/nodekit/internal/downward"
	"github.com/nodekit/nodekit/internal/expansion"
	"github.com/nodekit/nodekit/managers/nodeip"
	"github.com/nodekit/nodekit/managers/objects"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

// ReasonInvalidEnvironmentVariableNames is the kubelet's event reason for
// envFrom keys skipped because they are not valid variable names.
const ReasonInvalidEnvironmentVariableNames = "InvalidEnvironmentVariableNames"

// NodeResources gives the node's allocatable resources, the default limits
// that resourceFieldRef reports for a container without its own.
type NodeResources interface {
	// Allocatable returns the node's allocatable resources.
	Allocatable() (corev1.ResourceList, error)
}

// Config holds the Builder's settings.
type Config struct {
	// NodeIPs are the node's addresses, primary first: status.hostIP(s),
	// and status.podIP(s) of hostNetwork pods, used when Deps.NodeIPs is
	// nil. Defaults to none (then a status.hostIP reference fails, as the
	// kubelet's does without a node address).
	NodeIPs []string
	// NodeName is reported as spec.nodeName for a pod whose spec has none.
	// Defaults to "".
	NodeName string
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	for _, ip := range c.NodeIPs {
		if _, err := netip.ParseAddr(ip); err != nil {
			return fmt.Errorf("env: nodeIPs: %w", err)
		}
	}
	return nil
}

// Deps are what a Builder reads API-backed values from. Every field is
// optional: without Objects, configMap and secret references fail (there
// is no API server); without Services there is no service environment;
// without Node, unset limits are reported as 0; without Events, skipped
// envFrom keys are not reported; without NodeIPs, Config.NodeIPs are the
// node's addresses.
type Deps struct {
	Objects  objects.Manager
	Services objects.ServiceLister
	Node     NodeResources
	Events   noderuntime.EventRecorder
	// NodeIPs gives the node's addresses, the same the node status and the
	// pod status report.
	NodeIPs nodeip.Source
	// Offline, when set, keeps and serves the copies of checkpointed pods'
	// ConfigMaps and Secrets (see SetOffline); Log gets its lines.
	Offline OfflineObjects
	Log     logr.Logger
}

// Builder computes container environments as the kubelet's
// makeEnvironmentVariables does. It is stateless and safe for concurrent
// use.
type Builder struct {
	deps Deps
	cfg  Config
	// offline, when set (SetOffline), keeps and serves the offline copies
	// of the objects of checkpointed pods.
	offline atomic.Pointer[offline]
}

// New returns a Builder. It does no I/O.
func New(deps Deps, cfg Config) *Builder {
	b := &Builder{deps: deps, cfg: cfg}
	if deps.Offline != nil {
		log := deps.Log
		if log.GetSink() == nil {
			log = logr.Discard()
		}
		b.SetOffline(deps.Offline, log)
	}
	return b
}

// ContainerEnv returns the environment of container c of pod, whose
// current addresses are podIPs: the service environment, then envFrom
// (later sources win), then env in order (each value expanding $(VAR)
// references to the variables before it and to the service environment),
// then the service variables env did not set. A missing configMap, secret
// or key that is not optional is an error that names it (the kubelet's
// CreateContainerConfigError message). It blocks on the object caches.
// The result belongs to the caller.
func (b *Builder) ContainerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIPs []string) ([]corev1.EnvVar, error) {
	serviceEnv, err := b.serviceEnv(pod)
	if err != nil {
		return nil, err
	}
	r := &resolver{b: b, ctx: ctx, pod: pod, configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	vars := newOrdered()
	for i := range c.EnvFrom {
		if err := r.envFrom(&c.EnvFrom[i], vars); err != nil {
			return nil, err
		}
	}
	addrs := b.addresses(pod, podIPs)
	lookup := func(name string) (string, bool) {
		if v, ok := vars.get(name); ok {
			return v, true
		}
		v, ok := serviceEnv[name]
		return v, ok
	}
	for i := range c.Env {
		e := &c.Env[i]
		value := e.Value
		switch {
		case value != "":
			value = expansion.Expand(value, lookup)
		case e.ValueFrom != nil:
			v, ok, err := r.valueFrom(c, e, addrs)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue // an optional source that is missing
			}
			value = v
		}
		vars.set(e.Name, value)
	}
	out := vars.list()
	var rest []string
	for k := range serviceEnv {
		if _, ok := vars.get(k); !ok {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, corev1.EnvVar{Name: k, Value: serviceEnv[k]})
	}
	return out, nil
}

// resolver reads one container's sources, each object once.
type resolver struct {
	b          *Builder
	ctx        context.Context
	pod        *corev1.Pod
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

// configMap returns the named configMap of the pod's namespace; ok is
// false when it is missing and optional.
func (r *resolver) configMap(name string, optional bool) (*corev1.ConfigMap, bool, error) {
	if cm, ok := r.configMaps[name]; ok {
		return cm, true, nil
	}
	if r.b.deps.Objects == nil {
		return nil, false, fmt.Errorf("couldn't get configMap %v/%v, no kubeClient defined", r.pod.Namespace, name)
	}
	cm, err := r.getConfigMap(name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return nil, false, nil
		}
		if apierrors.IsNotFound(err) {
			return nil, false, fmt.Errorf("configmap %q not found", name)
		}
		return nil, false, err
	}
	r.configMaps[name] = cm
	return cm, true, nil
}

// secret is configMap for secrets.
func (r *resolver) secret(name string, optional bool) (*corev1.Secret, bool, error) {
	if s, ok := r.secrets[name]; ok {
		return s, true, nil
	}
	if r.b.deps.Objects == nil {
		return nil, false, fmt.Errorf("couldn't get secret %v/%v, no kubeClient defined", r.pod.Namespace, name)
	}
	s, err := r.getSecret(name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return nil, false, nil
		}
		if apierrors.IsNotFound(err) {
			return nil, false, fmt.Errorf("secret %q not found", name)
		}
		return nil, false, err
	}
	r.secrets[name] = s
	return s, true, nil
}

// envFrom adds the keys of one envFrom source, with its prefix, sorted.
// A key that is no valid variable name is skipped and reported with the
// kubelet's InvalidEnvironmentVariableNames event.
func (r *resolver) envFrom(from *corev1.EnvFromSource, vars *ordered) error {
	data := map[string]string{}
	var kind, name string
	switch {
	case from.ConfigMapRef != nil:
		kind, name = "configMap", from.ConfigMapRef.Name
		cm, ok, err := r.configMap(name, isTrue(from.ConfigMapRef.Optional))
		if err != nil || !ok {
			return err
		}
		for k, v := range cm.Data {
			data[k] = v
		}
	case from.SecretRef != nil:
		kind, name = "secret", from.SecretRef.Name
		s, ok, err := r.secret(name, isTrue(from.SecretRef.Optional))
		if err != nil || !ok {
			return err
		}
		for k, v := range s.Data {
			data[k] = string(v)
		}
	default:
		return nil
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var invalid []string
	for _, k := range keys {
		full := from.Prefix + k
		if msgs := validation.IsRelaxedEnvVarName(full); len(msgs) != 0 {
			invalid = append(invalid, full)
			continue
		}
		vars.set(full, data[k])
	}
	if len(invalid) > 0 && r.b.deps.Events != nil {
		r.b.deps.Events.Eventf(r.pod, corev1.EventTypeWarning, ReasonInvalidEnvironmentVariableNames,
			"Keys [%s] from the EnvFrom %s %s/%s were skipped since they are considered invalid environment variable names.",
			strings.Join(invalid, ", "), kind, r.pod.Namespace, name)
	}
	return nil
}

// valueFrom resolves one env valueFrom; ok is false when an optional
// source is missing and the variable is left out.
func (r *resolver) valueFrom(c *corev1.Container, e *corev1.EnvVar, addrs downward.Addresses) (string, bool, error) {
	from := e.ValueFrom
	switch {
	case from.FieldRef != nil:
		if from.FieldRef.FieldPath == "spec.nodeName" && r.pod.Spec.NodeName == "" {
			return r.b.cfg.NodeName, true, nil
		}
		v, err := downward.FieldValue(r.pod, from.FieldRef.FieldPath, addrs)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		var alloc corev1.ResourceList
		if r.b.deps.Node != nil {
			a, err := r.b.deps.Node.Allocatable()
			if err != nil {
				return "", false, fmt.Errorf("failed to find node object, expected a node: %w", err)
			}
			alloc = a
		}
		v, err := downward.ResourceValue(from.ResourceFieldRef, r.pod, c, alloc)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		optional := isTrue(ref.Optional)
		cm, ok, err := r.configMap(ref.Name, optional)
		if err != nil || !ok {
			return "", false, err
		}
		v, ok := cm.Data[ref.Key]
		if !ok && !optional {
			return "", false, fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, r.pod.Namespace, ref.Name)
		}
		return v, ok, nil
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		optional := isTrue(ref.Optional)
		s, ok, err := r.secret(ref.Name, optional)
		if err != nil || !ok {
			return "", false, err
		}
		v, ok := s.Data[ref.Key]
		if !ok && !optional {
			return "", false, fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, r.pod.Namespace, ref.Name)
		}
		return string(v), ok, nil
	case from.FileKeyRef != nil:
		return "", false, fmt.Errorf("env %q: fileKeyRef is not supported by nodekit", e.Name)
	}
	return "", false, fmt.Errorf("env %q: valueFrom names no source", e.Name)
}

func isTrue(b *bool) bool { return b != nil && *b }

// ordered is a set of variables that keeps the order of first definition.
type ordered struct {
	names  []string
	values map[string]string
}

func newOrdered() *ordered { return &ordered{values: map[string]string{}} }

func (o *ordered) set(name, value string) {
	if _, ok := o.values[name]; !ok {
		o.names = append(o.names, name)
	}
	o.values[name] = value
}

func (o *ordered) get(name string) (string, bool) {
	v, ok := o.values[name]
	return v, ok
}

func (o *ordered) list() []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(o.names))
	for _, n := range o.names {
		out = append(out, corev1.EnvVar{Name: n, Value: o.values[n]})
	}
	return out
}

// addresses are pod's IPs and the node's: a hostNetwork pod's IPs are the
// node's. An unknown node address is kept as the error a status.hostIP
// reference fails with.
func (b *Builder) addresses(pod *corev1.Pod, podIPs []string) downward.Addresses {
	hostIPs, err := b.cfg.NodeIPs, error(nil)
	if b.deps.NodeIPs != nil {
		hostIPs, err = b.deps.NodeIPs.NodeIPs()
	}
	addrs := downward.Addresses{PodIPs: podIPs, HostIPs: hostIPs, HostIPErr: err}
	if pod.Spec.HostNetwork && len(hostIPs) > 0 {
		addrs.PodIPs = hostIPs
	}
	return addrs
}
