package podvalidation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// StaticPodReferences returns an error for every reference of pod to an
// API object, which a static pod may not have (the kubelet's config
// sources refuse them, pkg/api/pod HasAPIObjectReference): a static pod is
// written by whoever can write the manifest, not admitted by the API
// server, so a reference would let it read objects of any namespace with
// the agent's credentials. Each error is a field.Forbidden naming the
// field, with the kubelet's message for that kind of reference, as
// "static pods may not reference secrets". The references are
// serviceAccountName; imagePullSecrets; secrets and config maps in env and
// envFrom of any container; resourceClaims; secret, configMap, PVC,
// ephemeral, CSI, glusterfs and azureFile volumes and the secretRef of
// other volumes; projected secrets, config maps, service account tokens,
// cluster trust bundles and pod certificates. automountServiceAccountToken
// is not one: as in the kubelet, no token is mounted into a static pod
// (the API server's admission, which adds the token volume, never sees
// one), so the field has no effect. It does not change pod.
func StaticPodReferences(pod *corev1.Pod) field.ErrorList {
	spec := &pod.Spec
	fld := field.NewPath("spec")
	var errs field.ErrorList
	refuse := func(at *field.Path, resource string) {
		errs = append(errs, field.Forbidden(at, "static pods may not reference "+resource))
	}
	if spec.ServiceAccountName != "" {
		refuse(fld.Child("serviceAccountName"), "serviceaccounts")
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name != "" {
			refuse(fld.Child("imagePullSecrets").Index(i), "secrets")
		}
	}
	for i := range spec.InitContainers {
		containerReferences(&spec.InitContainers[i], fld.Child("initContainers").Index(i), refuse)
	}
	for i := range spec.Containers {
		containerReferences(&spec.Containers[i], fld.Child("containers").Index(i), refuse)
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		containerReferences(&c, fld.Child("ephemeralContainers").Index(i), refuse)
	}
	if len(spec.ResourceClaims) > 0 {
		refuse(fld.Child("resourceClaims"), "resourceclaims")
	}
	for i := range spec.Volumes {
		volumeReferences(&spec.Volumes[i].VolumeSource, fld.Child("volumes").Index(i), refuse)
	}
	return errs
}

// containerReferences refuses the secrets and config maps of a container's
// env and envFrom.
func containerReferences(c *corev1.Container, fld *field.Path, refuse func(*field.Path, string)) {
	for i, e := range c.EnvFrom {
		at := fld.Child("envFrom").Index(i)
		if e.SecretRef != nil && e.SecretRef.Name != "" {
			refuse(at.Child("secretRef"), "secrets")
		}
		if e.ConfigMapRef != nil && e.ConfigMapRef.Name != "" {
			refuse(at.Child("configMapRef"), "configmaps")
		}
	}
	for i, e := range c.Env {
		if e.ValueFrom == nil {
			continue
		}
		at := fld.Child("env").Index(i).Child("valueFrom")
		if r := e.ValueFrom.SecretKeyRef; r != nil && r.Name != "" {
			refuse(at.Child("secretKeyRef"), "secrets")
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil && r.Name != "" {
			refuse(at.Child("configMapKeyRef"), "configmaps")
		}
	}
}

// volumeReferences refuses what a volume references, with the kubelet's
// message: a named secret or config map is "secrets" or "configmaps" (the
// kubelet looks for those first), the volume kind otherwise.
func volumeReferences(v *corev1.VolumeSource, fld *field.Path, refuse func(*field.Path, string)) {
	named := func(at *field.Path, name, resource, unnamed string) {
		if name != "" {
			refuse(at, resource)
		} else if unnamed != "" {
			refuse(at, unnamed)
		}
	}
	secretRef := func(at *field.Path, ref *corev1.LocalObjectReference) {
		if ref != nil {
			named(at.Child("secretRef"), ref.Name, "secrets", "")
		}
	}
	switch {
	case v.Secret != nil:
		named(fld.Child("secret"), v.Secret.SecretName, "secrets", "secrets (via secret volumes)")
	case v.ConfigMap != nil:
		named(fld.Child("configMap"), v.ConfigMap.Name, "configmaps", "configmaps (via configmap volumes)")
	case v.AzureFile != nil:
		named(fld.Child("azureFile"), v.AzureFile.SecretName, "secrets", "secrets (via azureFile volumes)")
	case v.CSI != nil:
		if r := v.CSI.NodePublishSecretRef; r != nil && r.Name != "" {
			refuse(fld.Child("csi", "nodePublishSecretRef"), "secrets")
		} else {
			refuse(fld.Child("csi"), "csidrivers (via CSI volumes)")
		}
	case v.Glusterfs != nil:
		refuse(fld.Child("glusterfs"), "endpoints (via glusterFS volumes)")
	case v.PersistentVolumeClaim != nil:
		refuse(fld.Child("persistentVolumeClaim"), "persistentvolumeclaims")
	case v.Ephemeral != nil:
		refuse(fld.Child("ephemeral"), "persistentvolumeclaims (via ephemeral volumes)")
	case v.Projected != nil:
		projectedReferences(v.Projected, fld.Child("projected", "sources"), refuse)
	case v.CephFS != nil:
		secretRef(fld.Child("cephfs"), v.CephFS.SecretRef)
	case v.Cinder != nil:
		secretRef(fld.Child("cinder"), v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		secretRef(fld.Child("flexVolume"), v.FlexVolume.SecretRef)
	case v.RBD != nil:
		secretRef(fld.Child("rbd"), v.RBD.SecretRef)
	case v.ScaleIO != nil:
		secretRef(fld.Child("scaleIO"), v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		secretRef(fld.Child("iscsi"), v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		if r := v.StorageOS.SecretRef; r != nil && r.Name != "" {
			refuse(fld.Child("storageos", "secretRef"), "secrets")
		}
	}
}

// projectedReferences refuses every projected source but downwardAPI.
func projectedReferences(p *corev1.ProjectedVolumeSource, fld *field.Path, refuse func(*field.Path, string)) {
	for i, s := range p.Sources {
		at := fld.Index(i)
		switch {
		case s.Secret != nil && s.Secret.Name != "":
			refuse(at.Child("secret"), "secrets")
		case s.Secret != nil:
			refuse(at.Child("secret"), "secrets (via projected volumes)")
		case s.ConfigMap != nil && s.ConfigMap.Name != "":
			refuse(at.Child("configMap"), "configmaps")
		case s.ConfigMap != nil:
			refuse(at.Child("configMap"), "configmaps (via projected volumes)")
		case s.ServiceAccountToken != nil:
			refuse(at.Child("serviceAccountToken"), "serviceaccounts (via projected volumes)")
		case s.ClusterTrustBundle != nil:
			refuse(at.Child("clusterTrustBundle"), "clustertrustbundles")
		case s.PodCertificate != nil:
			refuse(at.Child("podCertificate"), "podcertificates")
		}
	}
}
