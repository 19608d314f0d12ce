package podvalidation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxPathElement is the longest name a directory may have on Linux
// (NAME_MAX): the agent makes a directory named after each pod's UID.
const maxPathElement = 255

// ValidateIdentity checks what the agent builds paths from: the pod's UID,
// name and namespace must each be set and be a single path element (no "/",
// no NUL byte, not "." or "..", at most 255 bytes), since the pod's
// directories and log directories are named after them. It is the check
// every source's pods pass (the Mux drops a pod that fails it); Validate
// checks the UID so, and the name and namespace more strictly (DNS-1123).
// It does not change pod.
func ValidateIdentity(pod *corev1.Pod) field.ErrorList {
	meta := field.NewPath("metadata")
	errs := pathElement(string(pod.UID), meta.Child("uid"))
	errs = append(errs, pathElement(pod.Name, meta.Child("name"))...)
	return append(errs, pathElement(pod.Namespace, meta.Child("namespace"))...)
}

// pathElement checks that v is one non-empty element of a file path.
func pathElement(v string, fld *field.Path) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(fld, "")}
	case v == "." || v == "..":
		return field.ErrorList{field.Invalid(fld, v, "must not be '.' or '..'")}
	case strings.ContainsRune(v, '/'):
		return field.ErrorList{field.Invalid(fld, short(v), "must not contain '/'")}
	case strings.ContainsRune(v, 0):
		return field.ErrorList{field.Invalid(fld, short(v), "must not contain a NUL byte")}
	case len(v) > maxPathElement:
		return field.ErrorList{field.TooLong(fld, "", maxPathElement)}
	}
	return nil
}
