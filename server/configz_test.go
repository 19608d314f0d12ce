package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

type manifestURL struct {
	URL    string      `json:"url"`
	Header http.Header `json:"header,omitempty"`
}

// testConfigz is shaped as nodekit.Config: untagged fields, a nested
// source with a header, and headers in a map and behind a pointer.
type testConfigz struct {
	NodeName   string
	HTTPSource manifestURL
	Extra      *struct {
		Mirrors map[string]manifestURL `json:"mirrors"`
	} `json:"extra"`
	Self *testConfigz `json:"self,omitempty"`
}

func TestConfigzRedactsHeaderValues(t *testing.T) {
	t.Parallel()
	cfg := testConfigz{NodeName: "node-1", HTTPSource: manifestURL{URL: "https://manifests.example/pods",
		Header: http.Header{"Authorization": {"Bearer s3cret-token"}, "X-Tenant": {"tenant-key-1", "tenant-key-2"}}}}
	cfg.Extra = &struct {
		Mirrors map[string]manifestURL `json:"mirrors"`
	}{Mirrors: map[string]manifestURL{"m": {URL: "https://m", Header: http.Header{"Cookie": {"session=hidden-cookie"}}}}}
	s := NewSecure(SecureDeps{Pods: podsFixed{}, Configz: cfg}, logr.Discard(), Config{})
	rec := do(s.routes(), "GET", "/configz", "")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /configz = %d %q", rec.Code, body)
	}
	for _, secret := range []string{"s3cret-token", "tenant-key", "hidden-cookie"} {
		if strings.Contains(body, secret) {
			t.Errorf("/configz shows %q: %s", secret, body)
		}
	}
	for _, kept := range []string{`"Authorization":["REDACTED"]`, `"X-Tenant":["REDACTED"]`, `"Cookie":["REDACTED"]`,
		`"url":"https://manifests.example/pods"`, `"NodeName":"node-1"`} {
		if !strings.Contains(body, kept) {
			t.Errorf("/configz lacks %s: %s", kept, body)
		}
	}
}
