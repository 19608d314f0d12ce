package objects

import (
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func keys(m map[string]struct{}) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestReferencedNames(t *testing.T) {
	t.Parallel()
	ref := func(n string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: n} }
	env := func(cm, sec string) []corev1.EnvVar {
		return []corev1.EnvVar{
			{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref(cm), Key: "k"}}},
			{Name: "B", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref(sec), Key: "k"}}},
			{Name: "C", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "D", Value: "plain"},
		}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{ref("pull")},
		InitContainers:   []corev1.Container{{Name: "i", Env: env("cm-init", "sec-init")}},
		Containers: []corev1.Container{{
			Name: "c", Env: env("cm-env", "sec-env"),
			EnvFrom: []corev1.EnvFromSource{
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref("cm-from")}},
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref("sec-from")}},
			},
		}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Env: env("cm-eph", "sec-eph")}}},
		Volumes: []corev1.Volume{
			{Name: "v1", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("cm-vol")}}},
			{Name: "v2", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec-vol"}}},
			{Name: "v3", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("kube-root-ca.crt")}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: ref("sec-proj")}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}}},
			{Name: "v4", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "sec-csi"}}}},
			{Name: "v5", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}}
	wantCM := []string{"cm-env", "cm-eph", "cm-from", "cm-init", "cm-vol", "kube-root-ca.crt"}
	wantSec := []string{"pull", "sec-csi", "sec-env", "sec-eph", "sec-from", "sec-init", "sec-proj", "sec-vol"}
	if got := keys(configMapNames(pod)); !reflect.DeepEqual(got, wantCM) {
		t.Errorf("configMapNames = %v, want %v", got, wantCM)
	}
	if got := keys(secretNames(pod)); !reflect.DeepEqual(got, wantSec) {
		t.Errorf("secretNames = %v, want %v", got, wantSec)
	}
	if got := keys(secretNames(&corev1.Pod{})); len(got) != 0 {
		t.Errorf("secretNames of an empty pod = %v, want none", got)
	}
}
