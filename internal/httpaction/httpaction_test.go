package httpaction

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNewRequest(t *testing.T) {
	get := &corev1.HTTPGetAction{Scheme: "HTTPS", Path: "/healthz?x=1", HTTPHeaders: []corev1.HTTPHeader{
		{Name: "Host", Value: "example.test"}, {Name: "X-A", Value: "1"}, {Name: "Accept", Value: ""},
	}}
	req, err := NewRequest(context.Background(), get, Host("10.0.0.7"), 8443, "kube-probe/1.37")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.String(), "https://10.0.0.7:8443/healthz?x=1"; got != want {
		t.Errorf("URL = %s, want %s", got, want)
	}
	if req.Host != "example.test" || req.Header.Get("X-A") != "1" || req.Header.Get("User-Agent") != "kube-probe/1.37" {
		t.Errorf("host %q, headers %v", req.Host, req.Header)
	}
	if _, ok := req.Header["Accept"]; ok {
		t.Errorf("an empty Accept header was sent: %v", req.Header)
	}

	asked := false
	get = &corev1.HTTPGetAction{Host: "192.0.2.1", HTTPHeaders: []corev1.HTTPHeader{{Name: "User-Agent", Value: "mine"}}}
	req, err = NewRequest(context.Background(), get, func(context.Context) (string, error) { asked = true; return "", nil }, 80, "ua")
	if err != nil || asked {
		t.Fatalf("err %v, pod host asked %v; want the action's host used", err, asked)
	}
	if req.URL.String() != "http://192.0.2.1:80" || req.Header.Get("User-Agent") != "mine" || req.Header.Get("Accept") != "*/*" {
		t.Errorf("URL %s, headers %v", req.URL, req.Header)
	}

	boom := errors.New("no pod IP")
	if _, err := NewRequest(context.Background(), &corev1.HTTPGetAction{}, func(context.Context) (string, error) { return "", boom }, 80, "ua"); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the pod host's error", err)
	}
}
