package objectcache

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fuzzKey is the key and an empty object of the kind chosen by kind.
func fuzzKey(kind byte, name string) (string, func() any) {
	switch kind % 3 {
	case 0:
		return ConfigMapKey(name), func() any { return &corev1.ConfigMap{} }
	case 1:
		return SecretKey(name), func() any { return &corev1.Secret{} }
	}
	return TokenKey(name, authenticationv1.TokenRequestSpec{Audiences: []string{"api"}}),
		func() any { return &authenticationv1.TokenRequest{} }
}

// FuzzObjectCopy writes arbitrary bytes as the offline copy of a
// ConfigMap, Secret or token under an arbitrary pod UID and object name,
// and loads it as the volume manager and the env builder do with the API
// server away. No panic; a UID or key that cannot name a file is an error
// for Load and Save, and every path stays one pod directory below Dir; a
// copy that cannot be decoded is an error naming its file; a copy that
// loads saves (trimmed) into another store and loads back to the same JSON
// with the save's time.
func FuzzObjectCopy(f *testing.F) {
	f.Add("u-1", "creds", byte(1), []byte(`{"savedAt":"2026-12-01T09:00:00Z","object":{"metadata":{"name":"creds","namespace":"ns"},"type":"Opaque","data":{"k":"dg=="}}}`))
	f.Add("u-1", "settings", byte(0), []byte(`{"savedAt":"2026-12-01T09:00:00Z","object":{"metadata":{"name":"settings","namespace":"ns","labels":{"a":"b"}},"data":{"a.conf":"x=1"},"binaryData":{"b":"AAE="}}}`))
	f.Add("u-1", "default", byte(2), []byte(`{"savedAt":"2026-12-01T09:00:00.5Z","object":{"spec":{"audiences":["api"],"expirationSeconds":3600},"status":{"token":"a.eyJleHAiOjE3OTY1NTg0MDB9.c","expirationTimestamp":"2026-12-01T10:00:00Z"}}}`))
	f.Add("u-1", "creds", byte(1), []byte(`{"savedAt":"2026-12-01T09:00:00Z"}`))
	f.Add("u-1", "creds", byte(1), []byte(`{"savedAt":"2026-12-01T09:00:00Z","object":null}`))
	f.Add("u-1", "creds", byte(1), []byte(`{"object":{"data":{"k":"not base64"}}}`))
	f.Add("u-1", "creds", byte(1), []byte(`{broken`))
	f.Add("../u-2", "creds", byte(1), []byte(`{}`))
	f.Add("u-1", "../../etc/passwd", byte(0), []byte(`{}`))
	f.Add(".u", "x", byte(0), []byte(`{}`))
	f.Add("u\\1", "x/y", byte(2), []byte(`{}`))
	f.Fuzz(func(t *testing.T, uid, name string, kind byte, data []byte) {
		s, _, _ := newStore(t)
		key, newObj := fuzzKey(kind, name)
		p := pod("x")
		p.UID = types.UID(uid)
		path, perr := s.path(p.UID, key)
		if perr != nil {
			if _, _, err := s.Load(p, key, newObj()); err == nil {
				t.Fatalf("Load of pod %q key %q gave no error, though they name no file", uid, key)
			}
			if err := s.Save(p, key, newObj()); err == nil {
				t.Fatalf("Save of pod %q key %q gave no error, though they name no file", uid, key)
			}
			return
		}
		if rel, err := filepath.Rel(s.Dir(), path); err != nil || strings.Count(rel, string(filepath.Separator)) != 1 || strings.HasPrefix(rel, "..") {
			t.Fatalf("pod %q key %q names %s, not one pod directory below %s", uid, key, path, s.Dir())
		}
		if len(filepath.Base(path)) > 255 || os.MkdirAll(filepath.Dir(path), 0o700) != nil || os.WriteFile(path, data, 0o600) != nil {
			t.Skip() // a name the file system refuses
		}
		obj := newObj()
		_, found, err := s.Load(p, key, obj)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file %s", err, path)
			}
			return
		}
		if !found {
			t.Fatalf("Load found no copy at %s", path)
		}
		checkCopyRoundTrip(t, p, key, obj, newObj())
	})
}

// checkCopyRoundTrip saves obj for p into a new store and loads it into out.
func checkCopyRoundTrip(t *testing.T, p *corev1.Pod, key string, obj, out any) {
	t.Helper()
	trimmed, err := trim(obj)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(trimmed)
	if err != nil {
		t.Fatalf("encode loaded copy: %v", err)
	}
	s, clk, root := newStore(t)
	checkpoint(t, root, p)
	if err := s.Save(p, key, obj); err != nil {
		t.Fatalf("save the loaded copy: %v", err)
	}
	savedAt, found, err := s.Load(p, key, out)
	if err != nil || !found || !savedAt.Equal(clk.Now().Truncate(time.Second)) {
		t.Fatalf("load the saved copy = %v, %v, %v; want it, saved at %v", savedAt, found, err, clk.Now())
	}
	if got, _ := json.Marshal(out); !bytes.Equal(got, want) {
		t.Fatalf("saved and loaded:\n%s\nwant:\n%s", got, want)
	}
}
