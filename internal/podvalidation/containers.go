package podvalidation

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	pullPolicies           = []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}
	terminationMsgPolicies = []corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}
	protocols              = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}
	containerRestarts      = []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways,
		corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure}
	restartRuleActions   = []corev1.ContainerRestartRuleAction{corev1.ContainerRestartRuleActionRestart}
	restartRuleOperators = []corev1.ContainerRestartRuleOnExitCodesOperator{corev1.ContainerRestartRuleOnExitCodesOpIn,
		corev1.ContainerRestartRuleOnExitCodesOpNotIn}
	propagations = []corev1.MountPropagationMode{corev1.MountPropagationNone, corev1.MountPropagationHostToContainer, corev1.MountPropagationBidirectional}
)

// The API's limits on restartPolicyRules.
const (
	maxRestartRules      = 20
	maxRestartRuleValues = 255
)

// maxTerminationMessagePath is the API's limit on terminationMessagePath.
const maxTerminationMessagePath = 4096

// validateAllContainers checks the init and regular containers: names
// unique across both, each container's own fields, and host ports unique
// across the pod.
func validateAllContainers(spec *corev1.PodSpec, volumes sets.Set[string], fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(fld.Child("containers"), "must have at least one container"))
	}
	names := sets.New[string]()
	hostPorts := sets.New[string]()
	check := func(cs []corev1.Container, at *field.Path, init bool) {
		for i := range cs {
			c := &cs[i]
			cf := at.Index(i)
			errs = append(errs, validateContainerName(c.Name, names, cf.Child("name"))...)
			errs = append(errs, validateContainer(c, spec, volumes, init, cf)...)
			errs = append(errs, uniqueHostPorts(c.Ports, hostPorts, cf.Child("ports"))...)
		}
	}
	check(spec.InitContainers, fld.Child("initContainers"), true)
	check(spec.Containers, fld.Child("containers"), false)
	return errs
}

func validateContainerName(name string, names sets.Set[string], fld *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(fld, "")}
	case names.Has(name):
		return field.ErrorList{field.Duplicate(fld, name)}
	}
	names.Insert(name)
	return dnsLabel(name, fld)
}

func validateContainer(c *corev1.Container, spec *corev1.PodSpec, volumes sets.Set[string], init bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Image == "":
		errs = append(errs, field.Required(fld.Child("image"), ""))
	case c.Image != strings.TrimSpace(c.Image):
		errs = append(errs, field.Invalid(fld.Child("image"), short(c.Image), "must not have leading or trailing whitespace"))
	}
	if p := c.ImagePullPolicy; p != "" && !sets.New(pullPolicies...).Has(p) {
		errs = append(errs, field.NotSupported(fld.Child("imagePullPolicy"), p, pullPolicies))
	}
	if p := c.TerminationMessagePolicy; p != "" && !sets.New(terminationMsgPolicies...).Has(p) {
		errs = append(errs, field.NotSupported(fld.Child("terminationMessagePolicy"), p, terminationMsgPolicies))
	}
	if len(c.TerminationMessagePath) > maxTerminationMessagePath {
		errs = append(errs, field.TooLong(fld.Child("terminationMessagePath"), "", maxTerminationMessagePath))
	}
	errs = append(errs, validateContainerRestartPolicy(c, init, fld)...)
	errs = append(errs, validatePorts(c.Ports, spec.HostNetwork, fld.Child("ports"))...)
	errs = append(errs, validateEnv(c.Env, fld.Child("env"))...)
	errs = append(errs, validateEnvFrom(c.EnvFrom, fld.Child("envFrom"))...)
	errs = append(errs, validateVolumeMounts(c.VolumeMounts, volumes, fld.Child("volumeMounts"))...)
	errs = append(errs, validateVolumeDevices(c.VolumeDevices, volumes, fld.Child("volumeDevices"))...)
	errs = append(errs, validateProbesAndHooks(c, init, fld)...)
	errs = append(errs, validateResources(&c.Resources, fld.Child("resources"))...)
	errs = append(errs, validateContainerSecurityContext(c.SecurityContext, fld.Child("securityContext"))...)
	return errs
}

// validateContainerRestartPolicy checks restartPolicy and
// restartPolicyRules as the API server does with ContainerRestartRules
// (beta, on by default, in v1.37): a regular container may set Always,
// OnFailure or Never to override the pod's, and an init container too
// (Always makes it a sidecar, which may have no rules); rules need a
// restartPolicy, at most 20 of them, each with exitCodes (operator In or
// NotIn, at most 255 values) and action Restart. Action
// RestartAllContainers, which the API server also accepts in v1.37
// (RestartAllContainersOnContainerExits), is refused: nodekit does not run
// it.
func validateContainerRestartPolicy(c *corev1.Container, init bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.RestartPolicy == nil {
		if len(c.RestartPolicyRules) > 0 {
			errs = append(errs, field.Required(fld.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
		}
		return errs
	}
	if !sets.New(containerRestarts...).Has(*c.RestartPolicy) {
		return append(errs, field.NotSupported(fld.Child("restartPolicy"), *c.RestartPolicy, containerRestarts))
	}
	if init && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways && len(c.RestartPolicyRules) > 0 {
		return append(errs, field.Forbidden(fld.Child("restartPolicyRules"), "restartPolicyRules are not allowed for init containers with restart policy Always"))
	}
	return append(errs, validateRestartPolicyRules(c.RestartPolicyRules, fld.Child("restartPolicyRules"))...)
}

// validateRestartPolicyRules checks a container's restartPolicyRules.
func validateRestartPolicyRules(rules []corev1.ContainerRestartRule, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rules) > maxRestartRules {
		errs = append(errs, field.TooMany(fld, len(rules), maxRestartRules))
	}
	for i, rule := range rules {
		at := fld.Index(i)
		switch rule.Action {
		case corev1.ContainerRestartRuleActionRestart:
		case corev1.ContainerRestartRuleActionRestartAllContainers:
			errs = append(errs, field.Forbidden(at.Child("action"), "RestartAllContainers is not supported by nodekit"))
		default:
			errs = append(errs, field.NotSupported(at.Child("action"), rule.Action, restartRuleActions))
		}
		if rule.ExitCodes == nil {
			errs = append(errs, field.Required(at.Child("exitCodes"), "must be specified"))
			continue
		}
		if !sets.New(restartRuleOperators...).Has(rule.ExitCodes.Operator) {
			errs = append(errs, field.NotSupported(at.Child("exitCodes", "operator"), rule.ExitCodes.Operator, restartRuleOperators))
		}
		if n := len(rule.ExitCodes.Values); n > maxRestartRuleValues {
			errs = append(errs, field.TooMany(at.Child("exitCodes", "values"), n, maxRestartRuleValues))
		}
	}
	return errs
}

func validatePorts(ports []corev1.ContainerPort, hostNetwork bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		at := fld.Index(i)
		if p.Name != "" {
			for _, msg := range validation.IsValidPortName(p.Name) {
				errs = append(errs, field.Invalid(at.Child("name"), short(p.Name), msg))
			}
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(at.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(at.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, field.Invalid(at.Child("containerPort"), p.ContainerPort, msg))
			}
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(at.Child("hostPort"), p.HostPort, msg))
			}
		}
		if hostNetwork && p.HostPort != p.ContainerPort {
			errs = append(errs, field.Invalid(at.Child("hostPort"), p.HostPort, "must match `containerPort` when `hostNetwork` is true"))
		}
		switch {
		case p.Protocol == "":
			errs = append(errs, field.Required(at.Child("protocol"), ""))
		case !sets.New(protocols...).Has(p.Protocol):
			errs = append(errs, field.NotSupported(at.Child("protocol"), p.Protocol, protocols))
		}
		if p.HostIP != "" {
			errs = append(errs, validation.IsValidIP(at.Child("hostIP"), p.HostIP)...)
		}
	}
	return errs
}

// uniqueHostPorts reports a host port (with its protocol and host IP) that
// another port of the pod already uses.
func uniqueHostPorts(ports []corev1.ContainerPort, used sets.Set[string], fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, p := range ports {
		if p.HostPort == 0 {
			continue
		}
		key := fmt.Sprintf("%s/%s/%d", p.Protocol, p.HostIP, p.HostPort)
		if used.Has(key) {
			errs = append(errs, field.Duplicate(fld.Index(i).Child("hostPort"), key))
		}
		used.Insert(key)
	}
	return errs
}

func validateEnv(env []corev1.EnvVar, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		at := fld.Index(i)
		if e.Name == "" {
			errs = append(errs, field.Required(at.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(at.Child("name"), short(e.Name), msg))
			}
		}
		if e.ValueFrom != nil {
			errs = append(errs, validateEnvSource(e.ValueFrom, e.Value != "", at.Child("valueFrom"))...)
		}
	}
	return errs
}

// validateEnvSource: exactly one source, with the fields it needs, and not
// beside a literal value.
func validateEnvSource(s *corev1.EnvVarSource, hasValue bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if r := s.FieldRef; r != nil {
		n++
		if r.FieldPath == "" {
			errs = append(errs, field.Required(fld.Child("fieldRef", "fieldPath"), ""))
		}
	}
	if r := s.ResourceFieldRef; r != nil {
		n++
		if r.Resource == "" {
			errs = append(errs, field.Required(fld.Child("resourceFieldRef", "resource"), ""))
		}
	}
	if r := s.ConfigMapKeyRef; r != nil {
		n++
		errs = append(errs, keyRef(r.Name, r.Key, fld.Child("configMapKeyRef"))...)
	}
	if r := s.SecretKeyRef; r != nil {
		n++
		errs = append(errs, keyRef(r.Name, r.Key, fld.Child("secretKeyRef"))...)
	}
	if r := s.FileKeyRef; r != nil {
		n++
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(fld, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case n > 1:
		errs = append(errs, field.Invalid(fld, "", "may not have more than one field specified at a time"))
	case hasValue:
		errs = append(errs, field.Invalid(fld, "", "may not be specified when `value` is not empty"))
	}
	return errs
}

func keyRef(name, key string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(fld.Child("name"), ""))
	}
	if key == "" {
		errs = append(errs, field.Required(fld.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(fld.Child("key"), short(key), msg))
		}
	}
	return errs
}

func validateEnvFrom(from []corev1.EnvFromSource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range from {
		at := fld.Index(i)
		if e.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(e.Prefix) {
				errs = append(errs, field.Invalid(at.Child("prefix"), short(e.Prefix), msg))
			}
		}
		n := 0
		if e.ConfigMapRef != nil {
			n++
			if e.ConfigMapRef.Name == "" {
				errs = append(errs, field.Required(at.Child("configMapRef", "name"), ""))
			}
		}
		if e.SecretRef != nil {
			n++
			if e.SecretRef.Name == "" {
				errs = append(errs, field.Required(at.Child("secretRef", "name"), ""))
			}
		}
		switch {
		case n == 0:
			errs = append(errs, field.Invalid(at, "", "must specify one of: `configMapRef` or `secretRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(at, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func validateVolumeMounts(mounts []corev1.VolumeMount, volumes sets.Set[string], fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		at := fld.Index(i)
		switch {
		case m.Name == "":
			errs = append(errs, field.Required(at.Child("name"), ""))
		case !volumes.Has(m.Name):
			errs = append(errs, field.NotFound(at.Child("name"), m.Name))
		}
		switch {
		case m.MountPath == "":
			errs = append(errs, field.Required(at.Child("mountPath"), ""))
		case paths.Has(m.MountPath):
			errs = append(errs, field.Invalid(at.Child("mountPath"), short(m.MountPath), "must be unique"))
		}
		paths.Insert(m.MountPath)
		if m.SubPath != "" {
			errs = append(errs, localDescendingPath(m.SubPath, at.Child("subPath"))...)
		}
		if m.SubPath != "" && m.SubPathExpr != "" {
			errs = append(errs, field.Invalid(at.Child("subPathExpr"), short(m.SubPathExpr), "subPathExpr and subPath are mutually exclusive"))
		}
		if m.SubPathExpr != "" {
			errs = append(errs, localDescendingPath(m.SubPathExpr, at.Child("subPathExpr"))...)
		}
		if p := m.MountPropagation; p != nil && !sets.New(propagations...).Has(*p) {
			errs = append(errs, field.NotSupported(at.Child("mountPropagation"), *p, propagations))
		}
		if p := m.MountPropagation; p != nil && *p == corev1.MountPropagationBidirectional && m.ReadOnly {
			errs = append(errs, field.Forbidden(at.Child("mountPropagation"), "Bidirectional mount propagation is not allowed on a read-only mount"))
		}
	}
	return errs
}

func validateVolumeDevices(devices []corev1.VolumeDevice, volumes sets.Set[string], fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, d := range devices {
		at := fld.Index(i)
		if !volumes.Has(d.Name) {
			errs = append(errs, field.NotFound(at.Child("name"), d.Name))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(at.Child("devicePath"), ""))
		}
	}
	return errs
}

// localDescendingPath: a relative path that does not leave its base (no
// leading '/', no '..' element).
func localDescendingPath(p string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(p) || strings.HasPrefix(p, `\`) {
		errs = append(errs, field.Invalid(fld, short(p), "must be a relative path"))
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			errs = append(errs, field.Invalid(fld, short(p), "must not contain '..'"))
			break
		}
	}
	return errs
}
