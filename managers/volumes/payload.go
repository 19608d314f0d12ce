package volumes

import (
	"context"
	"errors"
	"fmt"
	"os"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Errors of API-backed volumes on an agent without the API.
var (
	errNoObjects = errors.New("no API server is configured: configMap and secret volumes need one")
	errNoTokens  = errors.New("no API server is configured: serviceAccountToken projections need one")
)

// isOptional reads an optional flag; unset is false, the API default.
func isOptional(b *bool) bool { return b != nil && *b }

// configMapPayload is the files of a configMap volume or projection: every
// key of data and binaryData, or just items (a missing key is an error
// unless optional), with their modes. A missing ConfigMap gives no files
// when optional.
func (m *VolumeManager) configMapPayload(ctx context.Context, vs source, src *corev1.ConfigMapVolumeSource) (map[string]File, error) {
	return m.configMapFiles(ctx, vs, src.Name, src.Items, isOptional(src.Optional), modeOr(src.DefaultMode))
}

func (m *VolumeManager) configMapFiles(ctx context.Context, vs source, name string, items []corev1.KeyToPath, optional bool, defaultMode int32) (map[string]File, error) {
	if m.objects == nil {
		return nil, errNoObjects
	}
	cm, err := m.getConfigMap(ctx, vs, name)
	if err != nil {
		return notFoundOr(err, optional, "configmap", name)
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles(data, items, optional, defaultMode, "configmap")
}

// secretPayload is the files of a secret volume, as configMapPayload.
func (m *VolumeManager) secretPayload(ctx context.Context, vs source, src *corev1.SecretVolumeSource) (map[string]File, error) {
	return m.secretFiles(ctx, vs, src.SecretName, src.Items, isOptional(src.Optional), modeOr(src.DefaultMode))
}

func (m *VolumeManager) secretFiles(ctx context.Context, vs source, name string, items []corev1.KeyToPath, optional bool, defaultMode int32) (map[string]File, error) {
	if m.objects == nil {
		return nil, errNoObjects
	}
	s, err := m.getSecret(ctx, vs, name)
	if err != nil {
		return notFoundOr(err, optional, "secret", name)
	}
	return keyFiles(s.Data, items, optional, defaultMode, "secret")
}

// notFoundOr handles a failed read of an object: a missing optional object
// gives no files; a missing one that is not optional is the kubelet's
// NotFound error (`configmap "app" not found`); any other error is
// returned as is.
func notFoundOr(err error, optional bool, kind, name string) (map[string]File, error) {
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	if optional {
		return map[string]File{}, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: kind}, name)
}

// keyFiles turns an object's keys into files: all of them named by key, or
// the items with their paths and modes.
func keyFiles(data map[string][]byte, items []corev1.KeyToPath, optional bool, defaultMode int32, kind string) (map[string]File, error) {
	files := map[string]File{}
	if len(items) == 0 {
		for k, v := range data {
			files[k] = File{Data: v, Mode: os.FileMode(defaultMode)}
		}
		return files, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("%s references non-existent config key: %s", kind, it.Key)
		}
		mode := defaultMode
		if it.Mode != nil {
			mode = *it.Mode
		}
		files[it.Path] = File{Data: v, Mode: os.FileMode(mode)}
	}
	return files, nil
}

// projectedPayload is the files of every source of a projected volume.
func (m *VolumeManager) projectedPayload(ctx context.Context, vs source, src *corev1.ProjectedVolumeSource) (map[string]File, error) {
	pod := vs.pod
	defaultMode := modeOr(src.DefaultMode)
	files := map[string]File{}
	for i := range src.Sources {
		s := &src.Sources[i]
		var (
			part map[string]File
			err  error
		)
		switch {
		case s.ConfigMap != nil:
			part, err = m.configMapFiles(ctx, vs, s.ConfigMap.Name, s.ConfigMap.Items, isOptional(s.ConfigMap.Optional), defaultMode)
		case s.Secret != nil:
			part, err = m.secretFiles(ctx, vs, s.Secret.Name, s.Secret.Items, isOptional(s.Secret.Optional), defaultMode)
		case s.DownwardAPI != nil:
			part, err = m.downwardPayload(pod, s.DownwardAPI.Items, defaultMode)
		case s.ServiceAccountToken != nil:
			part, err = m.tokenFile(ctx, vs, s.ServiceAccountToken, defaultMode)
		case s.ClusterTrustBundle != nil:
			err = errors.New("clusterTrustBundle projections are not supported by nodekit")
		case s.PodCertificate != nil:
			err = errors.New("podCertificate projections are not supported by nodekit")
		default:
			err = errors.New("a projected source names no type")
		}
		if err != nil {
			return nil, err
		}
		for p, f := range part {
			files[p] = f
		}
	}
	return files, nil
}

// defaultTokenExpiration is the API's default expirationSeconds.
const defaultTokenExpiration int64 = 3600

// tokenFile asks for a token of the pod's service account bound to the pod
// (the API server's audiences unless one is named) and makes it a file:
// defaultMode, or 0600 owned by the pod's user when the pod sets fsGroup or
// one runAsUser, as the kubelet writes it.
func (m *VolumeManager) tokenFile(ctx context.Context, vs source, tp *corev1.ServiceAccountTokenProjection, defaultMode int32) (map[string]File, error) {
	pod := vs.pod
	if m.tokens == nil {
		return nil, errNoTokens
	}
	var auds []string
	if tp.Audience != "" {
		auds = []string{tp.Audience}
	}
	exp := defaultTokenExpiration
	if tp.ExpirationSeconds != nil {
		exp = *tp.ExpirationSeconds
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr, err := m.getToken(ctx, vs, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         auds,
			ExpirationSeconds: &exp,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("fetch token: %w", err)
	}
	mode := os.FileMode(defaultMode)
	fsUser := podFSUser(pod)
	if fsUser != nil || podFSGroup(pod) != nil {
		mode = 0o600
	}
	return map[string]File{tp.Path: {Data: []byte(tr.Status.Token), Mode: mode, FsUser: fsUser}}, nil
}

// podFSUser is the runAsUser every init and regular container of the pod
// runs as (ephemeral ones do not count, as upstream), or nil when they
// differ or one has none.
func podFSUser(pod *corev1.Pod) *int64 {
	var user *int64
	same := true
	visit := func(sc *corev1.SecurityContext) {
		u := (*int64)(nil)
		if sc != nil && sc.RunAsUser != nil {
			u = sc.RunAsUser
		} else if psc := pod.Spec.SecurityContext; psc != nil {
			u = psc.RunAsUser
		}
		switch {
		case u == nil:
			same = false
		case user == nil:
			user = u
		case *user != *u:
			same = false
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(pod.Spec.InitContainers[i].SecurityContext)
	}
	for i := range pod.Spec.Containers {
		visit(pod.Spec.Containers[i].SecurityContext)
	}
	if !same {
		return nil
	}
	return user
}
