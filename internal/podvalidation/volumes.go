package podvalidation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxFileMode is the largest file mode a volume may set (0777).
const maxFileMode = 0o777

var (
	hostPathTypes = []corev1.HostPathType{corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
		corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev}
	storageMedia = []corev1.StorageMedium{corev1.StorageMediumDefault, corev1.StorageMediumMemory, corev1.StorageMediumHugePages}
)

// validateVolumes checks each volume (a unique DNS-1123 label name and
// exactly one source, well formed) and returns the names of the volumes.
func validateVolumes(volumes []corev1.Volume, fld *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range volumes {
		v := &volumes[i]
		at := fld.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(at.Child("name"), ""))
		case names.Has(v.Name):
			errs = append(errs, field.Duplicate(at.Child("name"), v.Name))
		default:
			errs = append(errs, dnsLabel(v.Name, at.Child("name"))...)
		}
		names.Insert(v.Name)
		errs = append(errs, validateVolumeSource(&v.VolumeSource, at)...)
	}
	return names, errs
}

func validateVolumeSource(s *corev1.VolumeSource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	set := func(isSet bool, check func() field.ErrorList) {
		if !isSet {
			return
		}
		n++
		if n > 1 {
			return // reported once below
		}
		errs = append(errs, check()...)
	}
	set(s.EmptyDir != nil, func() field.ErrorList { return validateEmptyDir(s.EmptyDir, fld.Child("emptyDir")) })
	set(s.HostPath != nil, func() field.ErrorList { return validateHostPath(s.HostPath, fld.Child("hostPath")) })
	set(s.Secret != nil, func() field.ErrorList { return validateSecretVolume(s.Secret, fld.Child("secret")) })
	set(s.ConfigMap != nil, func() field.ErrorList { return validateConfigMapVolume(s.ConfigMap, fld.Child("configMap")) })
	set(s.DownwardAPI != nil, func() field.ErrorList {
		return validateDownwardAPI(s.DownwardAPI.Items, s.DownwardAPI.DefaultMode, fld.Child("downwardAPI"))
	})
	set(s.Projected != nil, func() field.ErrorList { return validateProjected(s.Projected, fld.Child("projected")) })
	set(s.PersistentVolumeClaim != nil, func() field.ErrorList {
		if s.PersistentVolumeClaim.ClaimName == "" {
			return field.ErrorList{field.Required(fld.Child("persistentVolumeClaim", "claimName"), "")}
		}
		return nil
	})
	set(s.Image != nil, func() field.ErrorList {
		if s.Image.Reference == "" {
			return field.ErrorList{field.Required(fld.Child("image", "reference"), "")}
		}
		return nil
	})
	for _, other := range []bool{s.GCEPersistentDisk != nil, s.AWSElasticBlockStore != nil, s.GitRepo != nil, s.NFS != nil,
		s.ISCSI != nil, s.Glusterfs != nil, s.RBD != nil, s.FlexVolume != nil, s.Cinder != nil, s.CephFS != nil,
		s.Flocker != nil, s.FC != nil, s.AzureFile != nil, s.VsphereVolume != nil, s.Quobyte != nil, s.AzureDisk != nil,
		s.PhotonPersistentDisk != nil, s.PortworxVolume != nil, s.ScaleIO != nil, s.StorageOS != nil, s.CSI != nil,
		s.Ephemeral != nil} {
		set(other, func() field.ErrorList { return nil })
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(fld, "must specify a volume type"))
	case n > 1:
		errs = append(errs, field.Forbidden(fld, "may not specify more than 1 volume type"))
	}
	return errs
}

func validateEmptyDir(e *corev1.EmptyDirVolumeSource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if e.SizeLimit != nil && e.SizeLimit.Sign() < 0 {
		errs = append(errs, field.Invalid(fld.Child("sizeLimit"), e.SizeLimit.String(), "must be greater than or equal to 0"))
	}
	if m := e.Medium; !sets.New(storageMedia...).Has(m) && !isHugePages(corev1.ResourceName(m)) {
		errs = append(errs, field.NotSupported(fld.Child("medium"), m, storageMedia))
	}
	return errs
}

func validateHostPath(h *corev1.HostPathVolumeSource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(fld.Child("path"), ""))
	} else {
		errs = append(errs, noBacksteps(h.Path, fld.Child("path"))...)
	}
	if t := h.Type; t != nil && !sets.New(hostPathTypes...).Has(*t) {
		errs = append(errs, field.NotSupported(fld.Child("type"), *t, hostPathTypes))
	}
	return errs
}

func validateSecretVolume(s *corev1.SecretVolumeSource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.SecretName == "" {
		errs = append(errs, field.Required(fld.Child("secretName"), ""))
	}
	errs = append(errs, validateMode(s.DefaultMode, fld.Child("defaultMode"))...)
	return append(errs, validateKeyToPaths(s.Items, fld.Child("items"))...)
}

func validateConfigMapVolume(c *corev1.ConfigMapVolumeSource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(fld.Child("name"), ""))
	}
	errs = append(errs, validateMode(c.DefaultMode, fld.Child("defaultMode"))...)
	return append(errs, validateKeyToPaths(c.Items, fld.Child("items"))...)
}

func validateKeyToPaths(items []corev1.KeyToPath, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, it := range items {
		at := fld.Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(at.Child("key"), ""))
		}
		errs = append(errs, validateItemPath(it.Path, at.Child("path"))...)
		errs = append(errs, validateMode(it.Mode, at.Child("mode"))...)
	}
	return errs
}

func validateDownwardAPI(items []corev1.DownwardAPIVolumeFile, mode *int32, fld *field.Path) field.ErrorList {
	errs := validateMode(mode, fld.Child("defaultMode"))
	for i, it := range items {
		at := fld.Child("items").Index(i)
		errs = append(errs, validateItemPath(it.Path, at.Child("path"))...)
		errs = append(errs, validateMode(it.Mode, at.Child("mode"))...)
		switch {
		case it.FieldRef != nil && it.ResourceFieldRef != nil:
			errs = append(errs, field.Invalid(at, "", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		case it.FieldRef == nil && it.ResourceFieldRef == nil:
			errs = append(errs, field.Required(at, "one of fieldRef and resourceFieldRef is required"))
		case it.FieldRef != nil && it.FieldRef.FieldPath == "":
			errs = append(errs, field.Required(at.Child("fieldRef", "fieldPath"), ""))
		case it.ResourceFieldRef != nil && it.ResourceFieldRef.Resource == "":
			errs = append(errs, field.Required(at.Child("resourceFieldRef", "resource"), ""))
		}
	}
	return errs
}

func validateProjected(p *corev1.ProjectedVolumeSource, fld *field.Path) field.ErrorList {
	errs := validateMode(p.DefaultMode, fld.Child("defaultMode"))
	for i, src := range p.Sources {
		at := fld.Child("sources").Index(i)
		n := 0
		if s := src.Secret; s != nil {
			n++
			if s.Name == "" {
				errs = append(errs, field.Required(at.Child("secret", "name"), ""))
			}
			errs = append(errs, validateKeyToPaths(s.Items, at.Child("secret", "items"))...)
		}
		if c := src.ConfigMap; c != nil {
			n++
			if c.Name == "" {
				errs = append(errs, field.Required(at.Child("configMap", "name"), ""))
			}
			errs = append(errs, validateKeyToPaths(c.Items, at.Child("configMap", "items"))...)
		}
		if d := src.DownwardAPI; d != nil {
			n++
			errs = append(errs, validateDownwardAPI(d.Items, nil, at.Child("downwardAPI"))...)
		}
		if t := src.ServiceAccountToken; t != nil {
			n++
			if t.Path == "" {
				errs = append(errs, field.Required(at.Child("serviceAccountToken", "path"), ""))
			}
			if e := t.ExpirationSeconds; e != nil && *e < 600 {
				errs = append(errs, field.Invalid(at.Child("serviceAccountToken", "expirationSeconds"), *e, "may not specify a duration less than 10 minutes"))
			}
		}
		if src.ClusterTrustBundle != nil {
			n++
		}
		if src.PodCertificate != nil {
			n++
		}
		switch {
		case n == 0:
			errs = append(errs, field.Required(at, "must specify a volume projection type"))
		case n > 1:
			errs = append(errs, field.Forbidden(at, "may not specify more than 1 volume projection type"))
		}
	}
	return errs
}

// validateItemPath: a file inside the volume: not empty, relative, no '..'
// element.
func validateItemPath(p string, fld *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fld, "")}
	}
	return localDescendingPath(p, fld)
}

func noBacksteps(p string, fld *field.Path) field.ErrorList {
	errs := localDescendingPath(p, fld)
	// An absolute host path is fine; only a '..' element is not.
	out := errs[:0]
	for _, e := range errs {
		if e.Detail != "must be a relative path" {
			out = append(out, e)
		}
	}
	return out
}

func validateMode(mode *int32, fld *field.Path) field.ErrorList {
	if mode == nil || (*mode >= 0 && *mode <= maxFileMode) {
		return nil
	}
	return field.ErrorList{field.Invalid(fld, *mode, validation.InclusiveRangeError(0, maxFileMode))}
}
