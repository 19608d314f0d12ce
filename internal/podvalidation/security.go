package podvalidation

import (
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	fsGroupPolicies = []corev1.PodFSGroupChangePolicy{corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways}
	seccompTypes    = []corev1.SeccompProfileType{corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined, corev1.SeccompProfileTypeLocalhost}
	appArmorTypes   = []corev1.AppArmorProfileType{corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined, corev1.AppArmorProfileTypeLocalhost}
	procMountTypes  = []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}
	groupPolicies   = []corev1.SupplementalGroupsPolicy{corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict}
)

// sysctlName is the kernel's sysctl name syntax, with '.' or '/' between
// segments, as the API server accepts it.
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// maxSysctlNameLength is the API's limit on a sysctl name.
const maxSysctlNameLength = 253

func validatePodSecurityContext(sc *corev1.PodSecurityContext, fld *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, userID(sc.RunAsUser, fld.Child("runAsUser"))...)
	errs = append(errs, groupID(sc.RunAsGroup, fld.Child("runAsGroup"))...)
	errs = append(errs, groupID(sc.FSGroup, fld.Child("fsGroup"))...)
	for i, g := range sc.SupplementalGroups {
		errs = append(errs, groupID(&g, fld.Child("supplementalGroups").Index(i))...)
	}
	if p := sc.FSGroupChangePolicy; p != nil && !sets.New(fsGroupPolicies...).Has(*p) {
		errs = append(errs, field.NotSupported(fld.Child("fsGroupChangePolicy"), *p, fsGroupPolicies))
	}
	if p := sc.SupplementalGroupsPolicy; p != nil && !sets.New(groupPolicies...).Has(*p) {
		errs = append(errs, field.NotSupported(fld.Child("supplementalGroupsPolicy"), *p, groupPolicies))
	}
	names := sets.New[string]()
	for i, s := range sc.Sysctls {
		at := fld.Child("sysctls").Index(i)
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(at.Child("name"), ""))
		case len(s.Name) > maxSysctlNameLength || !sysctlName.MatchString(s.Name):
			errs = append(errs, field.Invalid(at.Child("name"), short(s.Name),
				"must have at most 253 characters and match regex "+sysctlName.String()))
		case names.Has(s.Name):
			errs = append(errs, field.Duplicate(at.Child("name"), s.Name))
		}
		names.Insert(s.Name)
	}
	errs = append(errs, validateSeccomp(sc.SeccompProfile, fld.Child("seccompProfile"))...)
	errs = append(errs, validateAppArmor(sc.AppArmorProfile, fld.Child("appArmorProfile"))...)
	return errs
}

func validateContainerSecurityContext(sc *corev1.SecurityContext, fld *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, userID(sc.RunAsUser, fld.Child("runAsUser"))...)
	errs = append(errs, groupID(sc.RunAsGroup, fld.Child("runAsGroup"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(fld, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "CAP_SYS_ADMIN" || c == "SYS_ADMIN" {
					errs = append(errs, field.Invalid(fld, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	if p := sc.ProcMount; p != nil && !sets.New(procMountTypes...).Has(*p) {
		errs = append(errs, field.NotSupported(fld.Child("procMount"), *p, procMountTypes))
	}
	errs = append(errs, validateSeccomp(sc.SeccompProfile, fld.Child("seccompProfile"))...)
	errs = append(errs, validateAppArmor(sc.AppArmorProfile, fld.Child("appArmorProfile"))...)
	return errs
}

// validateSeccomp: a known type; a localhost profile exactly when the type
// is Localhost.
func validateSeccomp(p *corev1.SeccompProfile, fld *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case p.Type == "":
		errs = append(errs, field.Required(fld.Child("type"), ""))
	case !sets.New(seccompTypes...).Has(p.Type):
		errs = append(errs, field.NotSupported(fld.Child("type"), p.Type, seccompTypes))
	case p.Type == corev1.SeccompProfileTypeLocalhost && (p.LocalhostProfile == nil || *p.LocalhostProfile == ""):
		errs = append(errs, field.Required(fld.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
	case p.Type != corev1.SeccompProfileTypeLocalhost && p.LocalhostProfile != nil:
		errs = append(errs, field.Invalid(fld.Child("localhostProfile"), *p.LocalhostProfile, "can only be set when seccomp type is Localhost"))
	}
	if p.LocalhostProfile != nil && *p.LocalhostProfile != "" {
		errs = append(errs, localDescendingPath(*p.LocalhostProfile, fld.Child("localhostProfile"))...)
	}
	return errs
}

func validateAppArmor(p *corev1.AppArmorProfile, fld *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	switch {
	case p.Type == "":
		return field.ErrorList{field.Required(fld.Child("type"), "")}
	case !sets.New(appArmorTypes...).Has(p.Type):
		return field.ErrorList{field.NotSupported(fld.Child("type"), p.Type, appArmorTypes)}
	case p.Type == corev1.AppArmorProfileTypeLocalhost && (p.LocalhostProfile == nil || *p.LocalhostProfile == ""):
		return field.ErrorList{field.Required(fld.Child("localhostProfile"), "must be set when AppArmor type is Localhost")}
	case p.Type != corev1.AppArmorProfileTypeLocalhost && p.LocalhostProfile != nil:
		return field.ErrorList{field.Invalid(fld.Child("localhostProfile"), *p.LocalhostProfile, "can only be set when AppArmor type is Localhost")}
	}
	return nil
}

func userID(id *int64, fld *field.Path) field.ErrorList {
	if id == nil {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidUserID(*id) {
		errs = append(errs, field.Invalid(fld, *id, msg))
	}
	return errs
}

func groupID(id *int64, fld *field.Path) field.ErrorList {
	if id == nil {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidGroupID(*id) {
		errs = append(errs, field.Invalid(fld, *id, msg))
	}
	return errs
}
