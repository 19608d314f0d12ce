package podvalidation

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxShownValue is how much of a bad string value an error repeats.
const maxShownValue = 128

// Validate checks pod as the API server checks a pod create and returns
// every problem, each naming its field. The UID, which a source sets, must
// be a single path element (see ValidateIdentity), and the pod must be
// within the count limits (see limits.go). It does not change pod.
func Validate(pod *corev1.Pod) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, pathElement(string(pod.UID), field.NewPath("metadata", "uid"))...)
	if tooMany := validateCounts(&pod.Spec, field.NewPath("spec")); len(tooMany) > 0 {
		// The rest is not checked: a list beyond its limit would give an
		// error per item.
		return append(errs, tooMany...)
	}
	return append(errs, validateSpec(&pod.Spec, field.NewPath("spec"))...)
}

func validateSpec(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	volumes, vErrs := validateVolumes(spec.Volumes, fld.Child("volumes"))
	errs = append(errs, vErrs...)
	errs = append(errs, validateAllContainers(spec, volumes, fld)...)
	errs = append(errs, validateRestartPolicy(spec.RestartPolicy, fld.Child("restartPolicy"))...)
	errs = append(errs, validateDNS(spec, fld)...)
	errs = append(errs, validatePodSecurityContext(spec.SecurityContext, fld.Child("securityContext"))...)
	errs = append(errs, validateTolerations(spec.Tolerations, fld.Child("tolerations"))...)
	errs = append(errs, validateHostAliases(spec.HostAliases, fld.Child("hostAliases"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, fld.Child("nodeSelector"))...)
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(fld.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		errs = append(errs, field.Invalid(fld.Child("activeDeadlineSeconds"), *d,
			validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	if spec.Resources != nil {
		errs = append(errs, validateResources(spec.Resources, fld.Child("resources"))...)
	}
	errs = append(errs, dnsSubdomain(spec.ServiceAccountName, fld.Child("serviceAccountName"))...)
	errs = append(errs, dnsSubdomain(spec.PriorityClassName, fld.Child("priorityClassName"))...)
	errs = append(errs, dnsLabel(spec.Hostname, fld.Child("hostname"))...)
	errs = append(errs, dnsLabel(spec.Subdomain, fld.Child("subdomain"))...)
	if len(spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(fld.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if spec.HostUsers != nil && !*spec.HostUsers && (spec.HostNetwork || spec.HostPID || spec.HostIPC) {
		errs = append(errs, field.Forbidden(fld.Child("hostUsers"), "when `hostUsers` is false, `hostNetwork`, `hostPID` and `hostIPC` must be false"))
	}
	if spec.HostPID && spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace {
		errs = append(errs, field.Invalid(fld.Child("shareProcessNamespace"), true, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			errs = append(errs, field.Required(fld.Child("imagePullSecrets").Index(i).Child("name"), ""))
		}
	}
	return errs
}

var restartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}

func validateRestartPolicy(p corev1.RestartPolicy, fld *field.Path) field.ErrorList {
	switch {
	case p == "":
		return field.ErrorList{field.Required(fld, "")}
	case !sets.New(restartPolicies...).Has(p):
		return field.ErrorList{field.NotSupported(fld, p, restartPolicies)}
	}
	return nil
}

var dnsPolicies = []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone}

// The API's limits on a pod's DNS config.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

func validateDNS(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch p := spec.DNSPolicy; {
	case p == "":
		errs = append(errs, field.Required(fld.Child("dnsPolicy"), ""))
	case !sets.New(dnsPolicies...).Has(p):
		errs = append(errs, field.NotSupported(fld.Child("dnsPolicy"), p, dnsPolicies))
	case p == corev1.DNSNone && spec.DNSConfig == nil:
		errs = append(errs, field.Required(fld.Child("dnsConfig"), "must provide `dnsConfig` when `dnsPolicy` is None"))
	}
	c := spec.DNSConfig
	if c == nil {
		return errs
	}
	cf := fld.Child("dnsConfig")
	if spec.DNSPolicy == corev1.DNSNone && len(c.Nameservers) == 0 {
		errs = append(errs, field.Required(cf.Child("nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None"))
	}
	if len(c.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.TooMany(cf.Child("nameservers"), len(c.Nameservers), maxDNSNameservers))
	}
	for i, ns := range c.Nameservers {
		errs = append(errs, validation.IsValidIP(cf.Child("nameservers").Index(i), ns)...)
	}
	if len(c.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.TooMany(cf.Child("searches"), len(c.Searches), maxDNSSearchPaths))
	}
	total := 0
	for i, s := range c.Searches {
		total += len(s)
		// A trailing dot is allowed, as in resolv.conf.
		if len(s) > 0 && s[len(s)-1] == '.' {
			s = s[:len(s)-1]
		}
		errs = append(errs, dnsSubdomain(s, cf.Child("searches").Index(i))...)
	}
	if total > maxDNSSearchListChars {
		errs = append(errs, field.Invalid(cf.Child("searches"), c.Searches,
			fmt.Sprintf("must not have more than %d characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, o := range c.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(cf.Child("options").Index(i).Child("name"), ""))
		}
	}
	return errs
}

var (
	tolerationOperators = []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}
	taintEffects        = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
)

func validateTolerations(ts []corev1.Toleration, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		at := fld.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, at.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(at.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(at.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(at.Child("value"), short(t.Value), msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(at.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(at.Child("operator"), t.Operator, tolerationOperators))
		}
		if t.Effect != "" && !sets.New(taintEffects...).Has(t.Effect) {
			errs = append(errs, field.NotSupported(at.Child("effect"), t.Effect, taintEffects))
		}
	}
	return errs
}

func validateHostAliases(aliases []corev1.HostAlias, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, a := range aliases {
		errs = append(errs, validation.IsValidIP(fld.Index(i).Child("ip"), a.IP)...)
		for j, h := range a.Hostnames {
			errs = append(errs, dnsSubdomain(h, fld.Index(i).Child("hostnames").Index(j))...)
		}
	}
	return errs
}

// dnsLabel checks an optional field that must be a DNS-1123 label.
func dnsLabel(v string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v == "" {
		return nil
	}
	for _, msg := range validation.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(fld, short(v), msg))
	}
	return errs
}

// dnsSubdomain checks an optional field that must be a DNS-1123 subdomain.
func dnsSubdomain(v string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v == "" {
		return nil
	}
	for _, msg := range validation.IsDNS1123Subdomain(v) {
		errs = append(errs, field.Invalid(fld, short(v), msg))
	}
	return errs
}

// short cuts a bad value to what an error message repeats.
func short(v string) string {
	if len(v) <= maxShownValue {
		return v
	}
	return fmt.Sprintf("%s... (%d bytes)", v[:maxShownValue], len(v))
}

// maxSummaryError is how much of one error Summary keeps: apimachinery's
// errors repeat the bad value, which may be megabytes long.
const maxSummaryError = 512

// Summary formats errs for a log line or an error message: every error,
// separated by "; ", each cut to 512 bytes.
func Summary(errs field.ErrorList) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		s := e.Error()
		if len(s) > maxSummaryError {
			s = fmt.Sprintf("%s... (%d bytes)", s[:maxSummaryError], len(s))
		}
		parts[i] = s
	}
	return strings.Join(parts, "; ")
}
