package podvalidation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// standardContainerResources are the resources a container may name without
// a domain prefix.
var standardContainerResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

// validateResources: known or fully qualified resource names, non-negative
// quantities, whole numbers for extended resources, and requests no larger
// than limits.
func validateResources(r *corev1.ResourceRequirements, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range sets.List(sets.KeySet(list.rl)) {
			q := list.rl[name]
			at := fld.Child(list.name).Key(string(name))
			errs = append(errs, validateResourceName(name, at)...)
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(at, q.String(), "must be greater than or equal to 0"))
			}
			if !standardContainerResources.Has(name) && !isHugePages(name) && q.MilliValue()%1000 != 0 {
				errs = append(errs, field.Invalid(at, q.String(), "must be an integer"))
			}
		}
	}
	for _, name := range sets.List(sets.KeySet(r.Requests)) {
		req := r.Requests[name]
		limit, ok := r.Limits[name]
		switch {
		case ok && req.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(fld.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !standardContainerResources.Has(name) && !isHugePages(name):
			errs = append(errs, field.Forbidden(fld.Child("limits"), fmt.Sprintf("must specify a limit for %s when it is requested", name)))
		case ok && !standardContainerResources.Has(name) && !isHugePages(name) && req.Cmp(limit) != 0:
			errs = append(errs, field.Invalid(fld.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		}
	}
	for i, c := range r.Claims {
		if c.Name == "" {
			errs = append(errs, field.Required(fld.Child("claims").Index(i).Child("name"), ""))
		}
	}
	return errs
}

// validateResourceName: cpu, memory, ephemeral-storage, hugepages-<size>,
// or a fully qualified name outside the kubernetes.io domain.
func validateResourceName(name corev1.ResourceName, fld *field.Path) field.ErrorList {
	s := string(name)
	switch {
	case standardContainerResources.Has(name):
		return nil
	case isHugePages(name):
		if _, err := resource.ParseQuantity(strings.TrimPrefix(s, corev1.ResourceHugePagesPrefix)); err != nil {
			return field.ErrorList{field.Invalid(fld, s, "must be hugepages-<page size>, the page size a quantity")}
		}
		return nil
	case !strings.Contains(s, "/"):
		return field.ErrorList{field.Invalid(fld, short(s), "must be a standard resource for containers or fully qualified")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(s) {
		errs = append(errs, field.Invalid(fld, short(s), msg))
	}
	if domain, _, _ := strings.Cut(s, "/"); domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") {
		errs = append(errs, field.Invalid(fld, short(s), "must be a standard resource for containers or fully qualified"))
	}
	return errs
}

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
