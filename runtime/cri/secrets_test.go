package cri

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKeyringFindsTheCredentialsForAnImage(t *testing.T) {
	t.Parallel()
	entries := map[string]dockerConfigEntry{
		"https://index.docker.io/v1/":  {Username: "hub"},
		"registry.test":                {Username: "host"},
		"registry.test/team":           {Username: "team"},
		"*.mirror.test":                {Username: "wildcard"},
		"127.0.0.1:5001":               {Username: "loopback"},
		"http://plain.test/v2/":        {Username: "plain"},
		"registry.test:8443/something": {Username: "port"},
	}
	var kr keyring
	for loc, e := range entries {
		if err := kr.add(loc, e); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, image string
		want        []string
	}{
		{"a short Docker Hub name gets the default registry's credentials", "busybox", []string{"hub"}},
		{"a Docker Hub user image too", "someone/tool:1", []string{"hub"}},
		{"the longest path wins first, then the host", "registry.test/team/app:1", []string{"team", "host"}},
		{"a host match alone", "registry.test/other/app@sha256:abc", []string{"host"}},
		{"a wildcard label matches one label", "eu.mirror.test/app", []string{"wildcard"}},
		{"a wildcard does not match two labels", "a.eu.mirror.test/app", nil},
		{"the port must match", "127.0.0.1:5001/nodekit/busybox:1", []string{"loopback"}},
		{"another port does not match", "127.0.0.1:5000/nodekit/busybox:1", nil},
		{"a scheme and an API prefix are ignored", "plain.test/x:1", []string{"plain"}},
		{"a port with a path", "registry.test:8443/something/else", []string{"port"}},
		{"an unknown registry gets nothing", "quay.test/app", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, a := range kr.lookup(c.image) {
				got = append(got, a.Username)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("lookup(%q) = %v, want %v", c.image, got, c.want)
			}
		})
	}
}

func TestKeyringReadsBothDockerSecretFormats(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		data     map[string][]byte
		user     string
		password string
		wantErr  string
	}{
		{"a dockerconfigjson auth field is decoded", map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"r.test":{"auth":"YWxpY2U6czNjcmV0"}}}`)}, "alice", "s3cret", ""},
		{"an unpadded auth field is decoded", map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"r.test":{"auth":"YWxpY2U6czNjcmV0MQ"}}}`)}, "alice", "s3cret1", ""},
		{"a dockercfg has no auths wrapper", map[string][]byte{corev1.DockerConfigKey: []byte(`{"r.test":{"username":"bob","password":"pw"}}`)}, "bob", "pw", ""},
		{"an auth field without a colon is an error", map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"r.test":{"auth":"Ym9i"}}}`)}, "", "", "base64(username:password)"},
		{"a secret of another type is an error", map[string][]byte{"token": []byte("x")}, "", "", "neither"},
		{"invalid JSON is an error", map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{`)}, "", "", "parse"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var kr keyring
			err := kr.addSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: c.data})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := kr.lookup("r.test/app:1")
			if len(got) != 1 || got[0].Username != c.user || got[0].Password != c.password {
				t.Errorf("credentials %v, want %s/%s", got, c.user, c.password)
			}
		})
	}
}
