package podvalidation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestValidateRefusesAUIDThatIsNotOnePathElement(t *testing.T) {
	t.Parallel()
	for _, uid := range []types.UID{"x/../../../somewhere", "..", ".", "a\x00b", "/abs", types.UID(strings.Repeat("u", 256)), ""} {
		p := validPod()
		p.UID = uid
		if !hasField(Validate(p), "metadata.uid") {
			t.Errorf("UID %q: Validate gave %v, want an error at metadata.uid", uid, Validate(p))
		}
	}
	for _, uid := range []types.UID{"0123456789abcdef0123456789abcdef", "5f0c1e2a-9c1b-4d0e-8a6f-0b6a3c2d1e0f", types.UID(strings.Repeat("u", 255)), "a..b"} {
		p := validPod()
		p.UID = uid
		if errs := Validate(p); len(errs) > 0 {
			t.Errorf("UID %q: Validate gave %v, want none", uid, errs)
		}
	}
}

func TestValidateIdentity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, uid, podName, namespace string
		wantField                     string
	}{
		{"an API pod is fine", "5f0c1e2a-9c1b-4d0e-8a6f-0b6a3c2d1e0f", "web", "default", ""},
		{"a UID leaving the pods directory is refused", "x/../../../somewhere", "web", "default", "metadata.uid"},
		{"a UID of .. is refused", "..", "web", "default", "metadata.uid"},
		{"a missing UID is refused", "", "web", "default", "metadata.uid"},
		{"a name with a slash is refused", "u", "a/b", "default", "metadata.name"},
		{"a name of . is refused", "u", ".", "default", "metadata.name"},
		{"a namespace of .. is refused", "u", "web", "..", "metadata.namespace"},
		{"a namespace with a NUL byte is refused", "u", "web", "a\x00", "metadata.namespace"},
		{"a missing namespace is refused", "u", "web", "", "metadata.namespace"},
	} {
		p := &corev1.Pod{}
		p.UID, p.Name, p.Namespace = types.UID(c.uid), c.podName, c.namespace
		errs := ValidateIdentity(p)
		if c.wantField == "" && len(errs) > 0 || c.wantField != "" && (len(errs) != 1 || errs[0].Field != c.wantField) {
			t.Errorf("%s: ValidateIdentity gave %v, want an error at %q only", c.name, errs, c.wantField)
		}
	}
}

func TestStaticPodReferencesRefusesEveryKindWithTheKubeletsMessage(t *testing.T) {
	t.Parallel()
	name := corev1.LocalObjectReference{Name: "x"}
	vol := func(s corev1.VolumeSource) func(*corev1.PodSpec) {
		return func(spec *corev1.PodSpec) {
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "v", VolumeSource: s})
		}
	}
	projected := func(s corev1.VolumeProjection) func(*corev1.PodSpec) {
		return vol(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{s}}})
	}
	env := func(s corev1.EnvVarSource) func(*corev1.PodSpec) {
		return func(spec *corev1.PodSpec) {
			spec.Containers[0].Env = append(spec.Containers[0].Env, corev1.EnvVar{Name: "E", ValueFrom: &s})
		}
	}
	for _, c := range []struct {
		name, field, resource string
		edit                  func(*corev1.PodSpec)
	}{
		{"serviceAccountName", "spec.serviceAccountName", "serviceaccounts", func(s *corev1.PodSpec) { s.ServiceAccountName = "default" }},
		{"imagePullSecrets", "spec.imagePullSecrets[0]", "secrets", func(s *corev1.PodSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{name} }},
		{"env secretKeyRef", "spec.containers[0].env[2].valueFrom.secretKeyRef", "secrets",
			env(corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: name, Key: "k"}})},
		{"env configMapKeyRef", "spec.containers[0].env[2].valueFrom.configMapKeyRef", "configmaps",
			env(corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: name, Key: "k"}})},
		{"envFrom secretRef in an init container", "spec.initContainers[0].envFrom[0].secretRef", "secrets", func(s *corev1.PodSpec) {
			s.InitContainers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: name}}}
		}},
		{"envFrom configMapRef", "spec.containers[0].envFrom[0].configMapRef", "configmaps", func(s *corev1.PodSpec) {
			s.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: name}}}
		}},
		{"resourceClaims", "spec.resourceClaims", "resourceclaims", func(s *corev1.PodSpec) {
			s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu")}}
		}},
		{"secret volume", "spec.volumes[2].secret", "secrets", vol(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "x"}})},
		{"secret volume without a name", "spec.volumes[2].secret", "secrets (via secret volumes)", vol(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}})},
		{"configMap volume", "spec.volumes[2].configMap", "configmaps", vol(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: name}})},
		{"persistentVolumeClaim volume", "spec.volumes[2].persistentVolumeClaim", "persistentvolumeclaims",
			vol(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}})},
		{"ephemeral volume", "spec.volumes[2].ephemeral", "persistentvolumeclaims (via ephemeral volumes)",
			vol(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})},
		{"CSI volume", "spec.volumes[2].csi", "csidrivers (via CSI volumes)", vol(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}})},
		{"CSI volume with a secret", "spec.volumes[2].csi.nodePublishSecretRef", "secrets",
			vol(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &name}})},
		{"glusterfs volume", "spec.volumes[2].glusterfs", "endpoints (via glusterFS volumes)", vol(corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{}})},
		{"azureFile volume", "spec.volumes[2].azureFile", "secrets", vol(corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "x"}})},
		{"rbd volume's secretRef", "spec.volumes[2].rbd.secretRef", "secrets", vol(corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{SecretRef: &name}})},
		{"projected secret", "spec.volumes[2].projected.sources[0].secret", "secrets",
			projected(corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: name}})},
		{"projected configMap", "spec.volumes[2].projected.sources[0].configMap", "configmaps",
			projected(corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: name}})},
		{"projected service account token", "spec.volumes[2].projected.sources[0].serviceAccountToken", "serviceaccounts (via projected volumes)",
			projected(corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}})},
		{"projected clusterTrustBundle", "spec.volumes[2].projected.sources[0].clusterTrustBundle", "clustertrustbundles",
			projected(corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), Path: "b"}})},
		{"projected podCertificate", "spec.volumes[2].projected.sources[0].podCertificate", "podcertificates",
			projected(corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: "s/x"}})},
	} {
		p := staticPod()
		c.edit(&p.Spec)
		errs := StaticPodReferences(p)
		want := "static pods may not reference " + c.resource
		if len(errs) != 1 || errs[0].Field != c.field || errs[0].Detail != want {
			t.Errorf("%s: StaticPodReferences gave %v, want one error at %s: %q", c.name, errs, c.field, want)
		}
	}
}

func TestStaticPodReferencesAcceptsWhatNeedsNoAPIObject(t *testing.T) {
	t.Parallel()
	p := staticPod()
	// As in the kubelet: automountServiceAccountToken has no effect on a
	// static pod (no token is mounted), so it is no reference.
	p.Spec.AutomountServiceAccountToken = ptr.To(true)
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "d", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{DownwardAPI: &corev1.DownwardAPIProjection{}}}}}})
	if errs := StaticPodReferences(p); len(errs) > 0 {
		t.Fatalf("StaticPodReferences gave %v for a pod of emptyDir, hostPath, downward API and env values only", errs)
	}
}

// staticPod is validPod without its configMap volume: a static pod that
// references no API object, of two volumes (data and a hostPath).
func staticPod() *corev1.Pod {
	p := validPod()
	p.Spec.Volumes[1] = corev1.Volume{Name: "conf", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/app"}}}
	return p
}

func hasField(errs field.ErrorList, f string) bool {
	for _, e := range errs {
		if e.Field == f {
			return true
		}
	}
	return false
}
