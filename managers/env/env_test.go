package env

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// fakeObjects is an objects.Manager over fixed maps.
type fakeObjects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	err        error
}

func (f *fakeObjects) GetConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if f.err != nil {
		return nil, f.err
	}
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("configmap"), name)
}

func (f *fakeObjects) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if f.err != nil {
		return nil, f.err
	}
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("secret"), name)
}

func (f *fakeObjects) RegisterPod(*corev1.Pod)   {}
func (f *fakeObjects) UnregisterPod(*corev1.Pod) {}

// fakeServices is an objects.ServiceLister over a fixed list.
type fakeServices struct {
	svcs     []*corev1.Service
	unsynced bool
}

func (f *fakeServices) ListServices(ns string) ([]*corev1.Service, error) {
	var out []*corev1.Service
	for _, s := range f.svcs {
		if s.Namespace == ns {
			out = append(out, s)
		}
	}
	return out, nil
}

func (f *fakeServices) HasSynced() bool { return !f.unsynced }

type fakeNode struct{ alloc corev1.ResourceList }

func (f fakeNode) Allocatable() (corev1.ResourceList, error) { return f.alloc, nil }

// recorder collects events as "type reason message".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(_ runtime.Object, eventType, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+" "+fmt.Sprintf(format, args...))
}

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID("uid-1"),
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "hi"}},
		Spec: corev1.PodSpec{NodeName: "node-a", ServiceAccountName: "sa", Containers: []corev1.Container{{Name: "c"}}},
	}
}

func objectsWith() *fakeObjects {
	return &fakeObjects{
		configMaps: map[string]*corev1.ConfigMap{"ns/cm": {Data: map[string]string{"k": "cm-v", "other": "o"}}},
		secrets:    map[string]*corev1.Secret{"ns/sec": {Data: map[string][]byte{"pw": []byte("s3cret")}}},
	}
}

func yes() *bool { b := true; return &b }

func cmKey(name, key string, optional *bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: optional}}
}

func secKey(name, key string, optional *bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: optional}}
}

func field(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
}

func asMap(vars []corev1.EnvVar) map[string]string {
	m := map[string]string{}
	for _, v := range vars {
		m[v.Name] = v.Value
	}
	return m
}

func TestContainerEnvSources(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		env     []corev1.EnvVar
		from    []corev1.EnvFromSource
		want    map[string]string
		wantErr string
	}{
		{name: "configMapKeyRef reads the key", env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("cm", "k", nil)}}, want: map[string]string{"A": "cm-v"}},
		{name: "secretKeyRef reads the key", env: []corev1.EnvVar{{Name: "A", ValueFrom: secKey("sec", "pw", nil)}}, want: map[string]string{"A": "s3cret"}},
		{name: "a missing configMap key fails naming it", env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("cm", "nope", nil)}}, wantErr: "couldn't find key nope in ConfigMap ns/cm"},
		{name: "a missing secret key fails naming it", env: []corev1.EnvVar{{Name: "A", ValueFrom: secKey("sec", "nope", nil)}}, wantErr: "couldn't find key nope in Secret ns/sec"},
		{name: "a missing configMap fails naming it", env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("gone", "k", nil)}}, wantErr: `configmap "gone" not found`},
		{name: "a missing secret fails naming it", env: []corev1.EnvVar{{Name: "A", ValueFrom: secKey("gone", "k", nil)}}, wantErr: `secret "gone" not found`},
		{name: "an optional missing key leaves the variable out", env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("cm", "nope", yes())}, {Name: "B", ValueFrom: secKey("sec", "nope", yes())}}, want: map[string]string{}},
		{name: "an optional missing object leaves the variable out", env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("gone", "k", yes())}, {Name: "B", ValueFrom: secKey("gone", "k", yes())}}, want: map[string]string{}},
		{name: "envFrom takes every key with its prefix, env overrides it", from: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
			{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}}},
		}, env: []corev1.EnvVar{{Name: "other", Value: "mine"}}, want: map[string]string{"k": "cm-v", "other": "mine", "S_pw": "s3cret"}},
		{name: "a later envFrom source wins", from: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm2"}}},
		}, want: map[string]string{"k": "cm2-v", "other": "o"}},
		{name: "an optional missing envFrom source is skipped", from: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: yes()}},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: yes()}},
		}, want: map[string]string{}},
		{name: "a missing envFrom source fails", from: []corev1.EnvFromSource{
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}},
		}, wantErr: `secret "gone" not found`},
		{name: "values expand earlier variables and envFrom keys", from: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
		}, env: []corev1.EnvVar{{Name: "X", Value: "$(k)-$(Y)-$$(k)"}, {Name: "Y", Value: "y"}}, want: map[string]string{"k": "cm-v", "other": "o", "X": "cm-v-$(Y)-$(k)", "Y": "y"}},
		{name: "every fieldRef", env: []corev1.EnvVar{
			{Name: "NAME", ValueFrom: field("metadata.name")}, {Name: "NS", ValueFrom: field("metadata.namespace")},
			{Name: "UID", ValueFrom: field("metadata.uid")}, {Name: "APP", ValueFrom: field("metadata.labels['app']")},
			{Name: "NOTE", ValueFrom: field("metadata.annotations['note']")}, {Name: "NODE", ValueFrom: field("spec.nodeName")},
			{Name: "SA", ValueFrom: field("spec.serviceAccountName")}, {Name: "PIP", ValueFrom: field("status.podIP")},
			{Name: "PIPS", ValueFrom: field("status.podIPs")}, {Name: "HIP", ValueFrom: field("status.hostIP")},
			{Name: "HIPS", ValueFrom: field("status.hostIPs")},
		}, want: map[string]string{"NAME": "p", "NS": "ns", "UID": "uid-1", "APP": "web", "NOTE": "hi", "NODE": "node-a", "SA": "sa",
			"PIP": "10.1.0.5", "PIPS": "10.1.0.5,fd00::5", "HIP": "192.0.2.1", "HIPS": "192.0.2.1,2001:db8::1"}},
		{name: "an unknown fieldRef path fails", env: []corev1.EnvVar{{Name: "A", ValueFrom: field("spec.schedulerName")}}, wantErr: `unsupported fieldRef path "spec.schedulerName"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs := objectsWith()
			objs.configMaps["ns/cm2"] = &corev1.ConfigMap{Data: map[string]string{"k": "cm2-v"}}
			b := New(Deps{Objects: objs}, Config{NodeIPs: []string{"192.0.2.1", "2001:db8::1"}})
			pod := testPod()
			pod.Spec.Containers[0].Env, pod.Spec.Containers[0].EnvFrom = tc.env, tc.from
			got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], []string{"10.1.0.5", "fd00::5"})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ContainerEnv: %v", err)
			}
			if m := asMap(got); !reflect.DeepEqual(m, tc.want) {
				t.Errorf("env = %v\nwant %v", m, tc.want)
			}
		})
	}
}

func TestEnvFromSkipsInvalidNamesWithAnEvent(t *testing.T) {
	t.Parallel()
	objs := &fakeObjects{configMaps: map[string]*corev1.ConfigMap{"ns/cm": {Data: map[string]string{"a=b": "x", "ok": "y", "": "z"}}}}
	rec := &recorder{}
	b := New(Deps{Objects: objs, Events: rec}, Config{})
	pod := testPod()
	pod.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
	got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := asMap(got); !reflect.DeepEqual(m, map[string]string{"ok": "y"}) {
		t.Errorf("env = %v, want only ok=y", m)
	}
	want := "Warning InvalidEnvironmentVariableNames Keys [, a=b] from the EnvFrom configMap ns/cm were skipped since they are considered invalid environment variable names."
	if len(rec.events) != 1 || rec.events[0] != want {
		t.Errorf("events = %q, want [%q]", rec.events, want)
	}
}

func TestWithoutAnAPIServerObjectReferencesFail(t *testing.T) {
	t.Parallel()
	b := New(Deps{}, Config{})
	pod := testPod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", ValueFrom: secKey("sec", "pw", yes())}}
	_, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if err == nil || !strings.Contains(err.Error(), "couldn't get secret ns/sec, no kubeClient defined") {
		t.Errorf("err = %v, want the kubelet's no-kubeClient error (even when optional)", err)
	}
}

func TestAPIErrorsOtherThanNotFoundFailEvenWhenOptional(t *testing.T) {
	t.Parallel()
	objs := &fakeObjects{err: apierrors.NewForbidden(corev1.Resource("configmaps"), "cm", fmt.Errorf("no relationship"))}
	b := New(Deps{Objects: objs}, Config{})
	pod := testPod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("cm", "k", yes())}}
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); !apierrors.IsForbidden(err) {
		t.Errorf("err = %v, want the Forbidden error", err)
	}
}

func TestHostNetworkPodsGetTheNodeIPAsPodIP(t *testing.T) {
	t.Parallel()
	b := New(Deps{}, Config{NodeIPs: []string{"192.0.2.1"}})
	pod := testPod()
	pod.Spec.HostNetwork = true
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PIP", ValueFrom: field("status.podIP")}, {Name: "HIP", ValueFrom: field("status.hostIP")}}
	got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := asMap(got); m["PIP"] != "192.0.2.1" || m["HIP"] != "192.0.2.1" {
		t.Errorf("env = %v, want podIP = hostIP = 192.0.2.1", m)
	}
}

func TestHostIPWithoutANodeAddressFails(t *testing.T) {
	t.Parallel()
	b := New(Deps{}, Config{})
	pod := testPod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "HIP", ValueFrom: field("status.hostIP")}}
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err == nil {
		t.Error("status.hostIP without a node IP: nil error, want one (never an empty value)")
	}
}

func TestSpecNodeNameDefaultsToTheNodesName(t *testing.T) {
	t.Parallel()
	b := New(Deps{}, Config{NodeName: "node-b"})
	pod := testPod()
	pod.Spec.NodeName = ""
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "N", ValueFrom: field("spec.nodeName")}}
	got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if err != nil || asMap(got)["N"] != "node-b" {
		t.Errorf("env = %v, %v; want N=node-b", got, err)
	}
}

func TestResourceFieldRef(t *testing.T) {
	t.Parallel()
	q := resource.MustParse
	node := fakeNode{alloc: corev1.ResourceList{corev1.ResourceCPU: q("4"), corev1.ResourceMemory: q("8Gi"), corev1.ResourceEphemeralStorage: q("100Gi")}}
	ref := func(res, div, container string) *corev1.EnvVarSource {
		s := &corev1.ResourceFieldSelector{Resource: res, ContainerName: container}
		if div != "" {
			s.Divisor = q(div)
		}
		return &corev1.EnvVarSource{ResourceFieldRef: s}
	}
	pod := testPod()
	pod.Spec.Containers = []corev1.Container{
		{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("250m"), corev1.ResourceMemory: q("64Mi"), corev1.ResourceEphemeralStorage: q("1Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("1500m"), corev1.ResourceMemory: q("128Mi")},
		}, Env: []corev1.EnvVar{
			{Name: "LCPU", ValueFrom: ref("limits.cpu", "", "")},
			{Name: "LCPU_M", ValueFrom: ref("limits.cpu", "1m", "")},
			{Name: "LMEM", ValueFrom: ref("limits.memory", "", "")},
			{Name: "LMEM_MI", ValueFrom: ref("limits.memory", "1Mi", "")},
			{Name: "LEPH_GI", ValueFrom: ref("limits.ephemeral-storage", "1Gi", "")},
			{Name: "RCPU", ValueFrom: ref("requests.cpu", "", "")},
			{Name: "RCPU_M", ValueFrom: ref("requests.cpu", "1m", "")},
			{Name: "RMEM_MI", ValueFrom: ref("requests.memory", "1Mi", "")},
			{Name: "REPH", ValueFrom: ref("requests.ephemeral-storage", "1Mi", "")},
			{Name: "OTHER_LCPU", ValueFrom: ref("limits.cpu", "", "side")},
			{Name: "OTHER_LMEM", ValueFrom: ref("limits.memory", "1Gi", "side")},
		}},
		{Name: "side"},
	}
	b := New(Deps{Node: node}, Config{})
	got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"LCPU": "2", "LCPU_M": "1500", "LMEM": "134217728", "LMEM_MI": "128", "LEPH_GI": "100",
		"RCPU": "1", "RCPU_M": "250", "RMEM_MI": "64", "REPH": "1024", "OTHER_LCPU": "4", "OTHER_LMEM": "8",
	}
	if m := asMap(got); !reflect.DeepEqual(m, want) {
		t.Errorf("env = %v\nwant %v", m, want)
	}

	pod.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("2Gi")}}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "M", ValueFrom: ref("limits.memory", "1Gi", "side")}}
	got, err = b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if err != nil || asMap(got)["M"] != "2" {
		t.Errorf("with a pod-level memory limit: %v, %v; want M=2", got, err)
	}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: ref("limits.nvidia.com/gpu", "", "")}}
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err == nil {
		t.Error("an unsupported resource: nil error")
	}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: ref("limits.cpu", "", "nobody")}}
	if _, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil); err == nil || err.Error() != "container nobody not found" {
		t.Errorf("an unknown container: %v", err)
	}
}
