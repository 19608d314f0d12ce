package env

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func svc(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func TestFromServiceMakesTheKubeletsVariables(t *testing.T) {
	t.Parallel()
	got := asMap(FromService(svc("ns", "my-web", "10.0.0.7",
		corev1.ServicePort{Name: "http", Port: 80}, corev1.ServicePort{Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP})))
	want := map[string]string{
		"MY_WEB_SERVICE_HOST": "10.0.0.7", "MY_WEB_SERVICE_PORT": "80",
		"MY_WEB_SERVICE_PORT_HTTP": "80", "MY_WEB_SERVICE_PORT_DNS_UDP": "53",
		"MY_WEB_PORT":              "tcp://10.0.0.7:80",
		"MY_WEB_PORT_80_TCP":       "tcp://10.0.0.7:80",
		"MY_WEB_PORT_80_TCP_PROTO": "tcp",
		"MY_WEB_PORT_80_TCP_PORT":  "80",
		"MY_WEB_PORT_80_TCP_ADDR":  "10.0.0.7",
		"MY_WEB_PORT_53_UDP":       "udp://10.0.0.7:53",
		"MY_WEB_PORT_53_UDP_PROTO": "udp",
		"MY_WEB_PORT_53_UDP_PORT":  "53",
		"MY_WEB_PORT_53_UDP_ADDR":  "10.0.0.7",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if v := FromService(svc("ns", "v6", "fd00::1", corev1.ServicePort{Port: 443})); asMap(v)["V6_PORT"] != "tcp://[fd00::1]:443" {
		t.Errorf("IPv6 link variable = %q", asMap(v)["V6_PORT"])
	}
	if v := FromService(svc("ns", "headless", "None", corev1.ServicePort{Port: 80})); v != nil {
		t.Errorf("headless service gave %v", v)
	}
}

func TestServiceEnvironment(t *testing.T) {
	t.Parallel()
	port := corev1.ServicePort{Name: "https", Port: 443}
	services := &fakeServices{svcs: []*corev1.Service{
		svc("default", "kubernetes", "10.0.0.1", port),
		svc("default", "other", "10.0.0.2", corev1.ServicePort{Port: 1}),
		svc("ns", "web", "10.0.0.3", corev1.ServicePort{Port: 8080}),
		svc("ns", "headless", "None", corev1.ServicePort{Port: 9}),
		svc("elsewhere", "db", "10.0.0.4", corev1.ServicePort{Port: 5432}),
	}}
	f := false
	cases := []struct {
		name    string
		links   *bool
		ns      string
		static  bool
		unsync  bool
		has     []string
		hasNot  []string
		wantErr bool
	}{
		{name: "links on by default: the kubernetes service and the namespace's", ns: "ns",
			has: []string{"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBERNETES_PORT_443_TCP", "WEB_SERVICE_HOST", "WEB_PORT"}, hasNot: []string{"OTHER_SERVICE_HOST", "DB_SERVICE_HOST", "HEADLESS_SERVICE_HOST"}},
		{name: "links off: only the kubernetes service", ns: "ns", links: &f,
			has: []string{"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}, hasNot: []string{"WEB_SERVICE_HOST"}},
		{name: "in default, every service of default", ns: "default", has: []string{"KUBERNETES_SERVICE_HOST", "OTHER_SERVICE_HOST"}},
		{name: "before services synced, an API pod fails", ns: "ns", unsync: true, wantErr: true},
		{name: "before services synced, a static pod gets what is known", ns: "ns", unsync: true, static: true, has: []string{"KUBERNETES_SERVICE_HOST"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sl := &fakeServices{svcs: services.svcs, unsynced: tc.unsync}
			b := New(Deps{Services: sl}, Config{})
			pod := testPod()
			pod.Namespace = tc.ns
			pod.Spec.EnableServiceLinks = tc.links
			if tc.static {
				pod.Annotations[annotationSource] = "file"
			}
			got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
			if tc.wantErr {
				if err == nil {
					t.Fatal("nil error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := asMap(got)
			for _, k := range tc.has {
				if _, ok := m[k]; !ok {
					t.Errorf("missing %s in %v", k, m)
				}
			}
			for _, k := range tc.hasNot {
				if _, ok := m[k]; ok {
					t.Errorf("unexpected %s", k)
				}
			}
			if tc.has != nil && m["KUBERNETES_SERVICE_HOST"] != "10.0.0.1" {
				t.Errorf("KUBERNETES_SERVICE_HOST = %q", m["KUBERNETES_SERVICE_HOST"])
			}
		})
	}
}

func TestContainerVariablesWinOverServiceVariablesAndExpandThem(t *testing.T) {
	t.Parallel()
	b := New(Deps{Services: &fakeServices{svcs: []*corev1.Service{svc("default", "kubernetes", "10.0.0.1", corev1.ServicePort{Port: 443})}}}, Config{})
	pod := testPod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "KUBERNETES_SERVICE_PORT", Value: "1"},
		{Name: "URL", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
	}
	got, err := b.ContainerEnv(context.Background(), pod, &pod.Spec.Containers[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	m := asMap(got)
	if m["KUBERNETES_SERVICE_PORT"] != "1" || m["URL"] != "https://10.0.0.1:1" || m["KUBERNETES_SERVICE_HOST"] != "10.0.0.1" {
		t.Errorf("env = %v", m)
	}
	seen := map[string]int{}
	for _, v := range got {
		seen[v.Name]++
		if seen[v.Name] > 1 {
			t.Errorf("%s appears twice", v.Name)
		}
	}
}
