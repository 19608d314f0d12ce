package objects

import (
	corev1 "k8s.io/api/core/v1"
)

// visitContainerEnv calls visit with the env and envFrom of every init,
// regular and ephemeral container of pod: the parts that name API objects.
func visitContainerEnv(pod *corev1.Pod, visit func(env []corev1.EnvVar, from []corev1.EnvFromSource)) {
	for i := range pod.Spec.InitContainers {
		visit(pod.Spec.InitContainers[i].Env, pod.Spec.InitContainers[i].EnvFrom)
	}
	for i := range pod.Spec.Containers {
		visit(pod.Spec.Containers[i].Env, pod.Spec.Containers[i].EnvFrom)
	}
	for i := range pod.Spec.EphemeralContainers {
		c := &pod.Spec.EphemeralContainers[i].EphemeralContainerCommon
		visit(c.Env, c.EnvFrom)
	}
}

// configMapNames returns the ConfigMaps pod references, as the kubelet's
// VisitPodConfigmapNames finds them: configMap volumes, projected
// configMap sources, env configMapKeyRef and envFrom configMapRef.
func configMapNames(pod *corev1.Pod) map[string]struct{} {
	names := map[string]struct{}{}
	add := func(name string) {
		if name != "" {
			names[name] = struct{}{}
		}
	}
	visitContainerEnv(pod, func(env []corev1.EnvVar, from []corev1.EnvFromSource) {
		for _, f := range from {
			if f.ConfigMapRef != nil {
				add(f.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				add(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.ConfigMap != nil {
			add(v.ConfigMap.Name)
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add(s.ConfigMap.Name)
				}
			}
		}
	}
	return names
}

// secretNames returns the Secrets pod references, as the kubelet's
// VisitPodSecretNames finds them: imagePullSecrets, env secretKeyRef,
// envFrom secretRef, secret volumes, projected secret sources and the
// secret references of the volume plugins that take one.
func secretNames(pod *corev1.Pod) map[string]struct{} {
	names := map[string]struct{}{}
	add := func(name string) {
		if name != "" {
			names[name] = struct{}{}
		}
	}
	for _, r := range pod.Spec.ImagePullSecrets {
		add(r.Name)
	}
	visitContainerEnv(pod, func(env []corev1.EnvVar, from []corev1.EnvFromSource) {
		for _, f := range from {
			if f.SecretRef != nil {
				add(f.SecretRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	})
	for i := range pod.Spec.Volumes {
		volumeSecretNames(&pod.Spec.Volumes[i], add)
	}
	return names
}

// volumeSecretNames calls add with each Secret volume v names.
func volumeSecretNames(v *corev1.Volume, add func(string)) {
	ref := func(r *corev1.LocalObjectReference) {
		if r != nil {
			add(r.Name)
		}
	}
	switch {
	case v.Secret != nil:
		add(v.Secret.SecretName)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				add(s.Secret.Name)
			}
		}
	case v.AzureFile != nil:
		add(v.AzureFile.SecretName)
	case v.CephFS != nil:
		ref(v.CephFS.SecretRef)
	case v.Cinder != nil:
		ref(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		ref(v.FlexVolume.SecretRef)
	case v.RBD != nil:
		ref(v.RBD.SecretRef)
	case v.ScaleIO != nil:
		ref(v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		ref(v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		ref(v.StorageOS.SecretRef)
	case v.CSI != nil:
		ref(v.CSI.NodePublishSecretRef)
	}
}
