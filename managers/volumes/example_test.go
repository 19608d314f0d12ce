package volumes_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/volumes"
)

// staticConfigMaps is an ObjectGetter over one ConfigMap.
type staticConfigMaps struct{ cm *corev1.ConfigMap }

func (s staticConfigMaps) GetConfigMap(context.Context, string, string) (*corev1.ConfigMap, error) {
	return s.cm, nil
}

func (s staticConfigMaps) GetSecret(context.Context, string, string) (*corev1.Secret, error) {
	return nil, fmt.Errorf("no secrets here")
}

func ExampleVolumeManager_SetUpPod() {
	root, _ := os.MkdirTemp("", "volumes-example")
	defer os.RemoveAll(root)
	objects := staticConfigMaps{&corev1.ConfigMap{Data: map[string]string{"greeting": "hello"}}}
	m := volumes.New(objects, nil, nil, nil, clock.RealClock{}, nil, logr.Discard(), volumes.Config{RootDir: root})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}}},
	}
	if err := m.SetUpPod(context.Background(), pod); err != nil {
		fmt.Println(err)
		return
	}
	vol := m.PodVolumes(pod.UID)["cfg"]
	b, _ := os.ReadFile(filepath.Join(vol.HostPath, "greeting"))
	rel, _ := filepath.Rel(root, vol.HostPath)
	fmt.Println(rel, vol.ReadOnly, string(b))
	// Output: pods/uid-1/volumes/kubernetes.io~configmap/cfg true hello
}
