package cri

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// effectiveSecurityContext merges the pod's security context into the
// container's, the container's fields winning, as the kubelet's
// DetermineEffectiveSecurityContext does. The result is a new object.
func effectiveSecurityContext(pod *corev1.Pod, c *corev1.Container) *corev1.SecurityContext {
	out := &corev1.SecurityContext{}
	if psc := pod.Spec.SecurityContext; psc != nil {
		out.SELinuxOptions = psc.SELinuxOptions
		out.RunAsUser = psc.RunAsUser
		out.RunAsGroup = psc.RunAsGroup
		out.RunAsNonRoot = psc.RunAsNonRoot
	}
	sc := c.SecurityContext
	if sc == nil {
		return out.DeepCopy()
	}
	set := func(dst **int64, src *int64) {
		if src != nil {
			*dst = src
		}
	}
	set(&out.RunAsUser, sc.RunAsUser)
	set(&out.RunAsGroup, sc.RunAsGroup)
	if sc.SELinuxOptions != nil {
		out.SELinuxOptions = sc.SELinuxOptions
	}
	if sc.RunAsNonRoot != nil {
		out.RunAsNonRoot = sc.RunAsNonRoot
	}
	out.Capabilities = sc.Capabilities
	out.Privileged = sc.Privileged
	out.ReadOnlyRootFilesystem = sc.ReadOnlyRootFilesystem
	out.AllowPrivilegeEscalation = sc.AllowPrivilegeEscalation
	out.ProcMount = sc.ProcMount
	return out.DeepCopy()
}

// securityContext is the container's CRI security context, as the kubelet
// builds it: the effective user, groups, capabilities, privileged and
// read-only root settings, no_new_privs, seccomp and AppArmor profiles,
// masked /proc paths and the pod's namespaces. uid or username is the
// image's user, used when no runAsUser is set.
func (m *Manager) securityContext(pod *corev1.Pod, c *corev1.Container, uid *int64, username string) (*runtimeapi.LinuxContainerSecurityContext, error) {
	eff := effectiveSecurityContext(pod, c)
	out := &runtimeapi.LinuxContainerSecurityContext{
		Capabilities:     capabilities(eff.Capabilities),
		SelinuxOptions:   seLinuxOption(eff.SELinuxOptions),
		Privileged:       eff.Privileged != nil && *eff.Privileged,
		ReadonlyRootfs:   eff.ReadOnlyRootFilesystem != nil && *eff.ReadOnlyRootFilesystem,
		NoNewPrivs:       eff.AllowPrivilegeEscalation != nil && !*eff.AllowPrivilegeEscalation,
		NamespaceOptions: namespaceOptions(pod),
	}
	switch {
	case eff.RunAsUser != nil:
		out.RunAsUser = &runtimeapi.Int64Value{Value: *eff.RunAsUser}
	case uid != nil:
		out.RunAsUser = &runtimeapi.Int64Value{Value: *uid}
		out.RunAsUsername = username
	default:
		out.RunAsUsername = username
	}
	if eff.RunAsGroup != nil {
		out.RunAsGroup = &runtimeapi.Int64Value{Value: *eff.RunAsGroup}
	}
	groups, policy, err := supplementalGroups(pod.Spec.SecurityContext)
	if err != nil {
		return nil, err
	}
	out.SupplementalGroups, out.SupplementalGroupsPolicy = groups, policy
	if out.Seccomp, err = m.seccompProfile(pod, c); err != nil {
		return nil, err
	}
	if out.Apparmor, out.ApparmorProfile, err = appArmorProfile(pod, c); err != nil {
		return nil, err
	}
	if eff.ProcMount != nil && *eff.ProcMount == corev1.UnmaskedProcMount {
		out.MaskedPaths, out.ReadonlyPaths = []string{}, []string{}
	} else {
		out.MaskedPaths, out.ReadonlyPaths = m.host.maskedPaths(), defaultReadonlyPaths()
	}
	return out, nil
}

// supplementalGroups are the pod's fsGroup and supplementalGroups, and its
// supplementalGroupsPolicy.
func supplementalGroups(psc *corev1.PodSecurityContext) ([]int64, runtimeapi.SupplementalGroupsPolicy, error) {
	if psc == nil {
		return nil, runtimeapi.SupplementalGroupsPolicy_Merge, nil
	}
	var groups []int64
	if psc.FSGroup != nil {
		groups = append(groups, *psc.FSGroup)
	}
	groups = append(groups, psc.SupplementalGroups...)
	policy := runtimeapi.SupplementalGroupsPolicy_Merge
	if p := psc.SupplementalGroupsPolicy; p != nil {
		v, ok := runtimeapi.SupplementalGroupsPolicy_value[string(*p)]
		if !ok {
			return nil, policy, fmt.Errorf("%w: unsupported supplementalGroupsPolicy %q", noderuntime.ErrConfig, *p)
		}
		policy = runtimeapi.SupplementalGroupsPolicy(v)
	}
	return groups, policy, nil
}

// capabilities passes the names through: the runtime adds the CAP_ prefix.
func capabilities(c *corev1.Capabilities) *runtimeapi.Capability {
	if c == nil {
		return nil
	}
	out := &runtimeapi.Capability{AddCapabilities: []string{}, DropCapabilities: []string{}}
	for _, v := range c.Add {
		out.AddCapabilities = append(out.AddCapabilities, string(v))
	}
	for _, v := range c.Drop {
		out.DropCapabilities = append(out.DropCapabilities, string(v))
	}
	return out
}

func seLinuxOption(o *corev1.SELinuxOptions) *runtimeapi.SELinuxOption {
	if o == nil {
		return nil
	}
	return &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
}

// seccompProfile is the container's seccompProfile, else the pod's, else
// RuntimeDefault under SeccompDefault and Unconfined otherwise. A Localhost
// profile is a file under SeccompProfileRoot.
func (m *Manager) seccompProfile(pod *corev1.Pod, c *corev1.Container) (*runtimeapi.SecurityProfile, error) {
	var p *corev1.SeccompProfile
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		p = c.SecurityContext.SeccompProfile
	} else if pod.Spec.SecurityContext != nil {
		p = pod.Spec.SecurityContext.SeccompProfile
	}
	switch {
	case p == nil && m.cfg.SeccompDefault, p != nil && p.Type == corev1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	case p != nil && p.Type == corev1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return nil, fmt.Errorf("%w: container %q: localhostProfile must be set if seccompProfile type is Localhost", noderuntime.ErrConfig, c.Name)
		}
		return &runtimeapi.SecurityProfile{
			ProfileType:  runtimeapi.SecurityProfile_Localhost,
			LocalhostRef: filepath.Join(m.cfg.SeccompProfileRoot, *p.LocalhostProfile),
		}, nil
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
}

// appArmorProfile is the container's appArmorProfile, else the pod's; nil
// when neither sets one. The second result is the deprecated string form.
func appArmorProfile(pod *corev1.Pod, c *corev1.Container) (*runtimeapi.SecurityProfile, string, error) {
	var p *corev1.AppArmorProfile
	if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
		p = c.SecurityContext.AppArmorProfile
	} else if pod.Spec.SecurityContext != nil {
		p = pod.Spec.SecurityContext.AppArmorProfile
	}
	if p == nil {
		return nil, "", nil
	}
	switch p.Type {
	case corev1.AppArmorProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, corev1.DeprecatedAppArmorBetaProfileRuntimeDefault, nil
	case corev1.AppArmorProfileTypeUnconfined:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, corev1.DeprecatedAppArmorBetaProfileNameUnconfined, nil
	case corev1.AppArmorProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return nil, "", fmt.Errorf("%w: container %q: missing localhost apparmor profile name", noderuntime.ErrConfig, c.Name)
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: *p.LocalhostProfile},
			corev1.DeprecatedAppArmorBetaProfileNamePrefix + *p.LocalhostProfile, nil
	}
	return nil, "", fmt.Errorf("%w: container %q: unknown apparmor profile type %q", noderuntime.ErrConfig, c.Name, p.Type)
}

// errRunAsRoot is the kubelet's refusal of an image that runs as root in a
// container with runAsNonRoot.
var errRunAsRoot = errors.New("container has runAsNonRoot and image will run as root")

// verifyRunAsNonRoot refuses a container with runAsNonRoot that would run
// as root: runAsUser 0, or no runAsUser and an image whose user is root or
// is a name that cannot be checked. uid and username are the image's user.
func verifyRunAsNonRoot(pod *corev1.Pod, c *corev1.Container, uid *int64, username string) error {
	eff := effectiveSecurityContext(pod, c)
	if eff.RunAsNonRoot == nil || !*eff.RunAsNonRoot {
		return nil
	}
	where := fmt.Sprintf("(pod: %q, container: %s)", formatPod(pod), c.Name)
	switch {
	case eff.RunAsUser != nil && *eff.RunAsUser == 0:
		return fmt.Errorf("%w: container's runAsUser breaks non-root policy %s", noderuntime.ErrConfig, where)
	case eff.RunAsUser != nil:
		return nil
	case uid == nil && username != "":
		return fmt.Errorf("%w: container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root %s", noderuntime.ErrConfig, username, where)
	case uid != nil && *uid == 0:
		return fmt.Errorf("%w: %w %s", noderuntime.ErrConfig, errRunAsRoot, where)
	case uid != nil && (*uid < 0 || *uid > math.MaxInt32):
		return fmt.Errorf("%w: container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)) %s", noderuntime.ErrConfig, *uid, math.MaxInt32, where)
	}
	return nil
}

// imageUser asks the runtime for the user an image runs as: a uid, or a
// user name, or (neither set) root.
func (m *Manager) imageUser(ctx context.Context, image string) (*int64, string, error) {
	resp, err := m.is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
	if err != nil {
		return nil, "", fmt.Errorf("inspect user of image %q: %w", image, err)
	}
	if img := resp.GetImage(); img != nil {
		if img.GetUid() != nil {
			uid := img.GetUid().GetValue()
			return &uid, "", nil
		}
		if img.GetUsername() != "" {
			return nil, img.GetUsername(), nil
		}
	}
	return new(int64), "", nil
}

// defaultReadonlyPaths are the /proc paths the kubelet asks the runtime to
// make read-only in every container without procMount Unmasked.
func defaultReadonlyPaths() []string {
	return []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
}

// staticMaskedPaths are the paths the kubelet asks the runtime to mask in
// every container without procMount Unmasked; each CPU's thermal_throttle
// directory is added when the machine has it.
var staticMaskedPaths = [...]string{
	"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
	"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
	"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
}
