package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"
)

// debugRoutes are the secure port's routes (without authentication) for
// cfg, with a verbosity setter that records what it was given unless
// noSetter.
func debugRoutes(t *testing.T, cfg Config, noSetter bool) (http.Handler, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var set []string
	deps := SecureDeps{Pods: podsFixed{}}
	if !noSetter {
		deps.Verbosity = func(v string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			set = append(set, v)
			return "successfully set klog.logging.verbosity to " + v, nil
		}
	}
	return NewSecure(deps, logr.Discard(), cfg).routes(), &set
}

func do(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return rec
}

func TestProfilingHandlerIsGETOnlyAndCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	on, _ := debugRoutes(t, Config{}, false)
	if rec := do(on, "GET", "/debug/pprof/", ""); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "heap") {
		t.Errorf("GET /debug/pprof/ = %d, want 200 with the index", rec.Code)
	}
	if rec := do(on, "GET", "/debug/pprof/cmdline", ""); rec.Code != http.StatusOK {
		t.Errorf("GET /debug/pprof/cmdline = %d, want 200", rec.Code)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "HEAD"} {
		rec := do(on, m, "/debug/pprof/symbol", "0x1")
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
			t.Errorf("%s /debug/pprof/symbol = %d Allow %q, want 405 Allow GET", m, rec.Code, rec.Header().Get("Allow"))
		}
	}
	off, _ := debugRoutes(t, Config{EnableProfilingHandler: ptr.To(false)}, false)
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1"} {
		if rec := do(off, "GET", p, ""); rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Body.String(), "profiling endpoint is disabled.") {
			t.Errorf("disabled GET %s = %d %q, want 405 profiling endpoint is disabled.", p, rec.Code, rec.Body.String())
		}
	}
}

func TestSystemLogHandlerServesTheLogDirAndCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "syslog"), []byte("kernel: hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	on, _ := debugRoutes(t, Config{SystemLogDir: dir}, false)
	if rec := do(on, "GET", "/logs/syslog", ""); rec.Code != http.StatusOK || rec.Body.String() != "kernel: hello\n" {
		t.Errorf("GET /logs/syslog = %d %q, want the file", rec.Code, rec.Body.String())
	}
	if rec := do(on, "GET", "/logs/", ""); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "syslog") {
		t.Errorf("GET /logs/ = %d %q, want a listing naming syslog", rec.Code, rec.Body.String())
	}
	if rec := do(on, "GET", "/logs/../../etc/passwd", ""); rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), "root:") {
		t.Errorf("GET /logs/../../etc/passwd left the log dir")
	}
	if rec := do(on, "DELETE", "/logs/syslog", ""); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /logs/syslog = %d, want 405", rec.Code)
	}
	off, _ := debugRoutes(t, Config{SystemLogDir: dir, EnableSystemLogHandler: ptr.To(false)}, false)
	if rec := do(off, "GET", "/logs/syslog", ""); rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Body.String(), "logs endpoint is disabled.") {
		t.Errorf("disabled GET /logs/syslog = %d %q, want 405 logs endpoint is disabled.", rec.Code, rec.Body.String())
	}
}

func TestDebugFlagsHandlerSetsTheVerbosity(t *testing.T) {
	t.Parallel()
	on, set := debugRoutes(t, Config{}, false)
	if rec := do(on, "PUT", "/debug/flags/v", "4"); rec.Code != http.StatusOK || rec.Body.String() != "successfully set klog.logging.verbosity to 4\n" {
		t.Errorf("PUT 4 = %d %q, want 200", rec.Code, rec.Body.String())
	}
	for _, body := range []string{"-1", "four", "99999999999"} {
		if rec := do(on, "PUT", "/debug/flags/v", body); rec.Code != http.StatusBadRequest {
			t.Errorf("PUT %q = %d, want 400", body, rec.Code)
		}
	}
	if rec := do(on, "GET", "/debug/flags/v", ""); rec.Code != http.StatusNotAcceptable {
		t.Errorf("GET = %d, want 406", rec.Code)
	}
	if len(*set) != 1 || (*set)[0] != "4" {
		t.Errorf("verbosity set to %v, want [4]", *set)
	}

	off, set := debugRoutes(t, Config{EnableDebugFlagsHandler: ptr.To(false)}, false)
	if rec := do(off, "PUT", "/debug/flags/v", "4"); rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Body.String(), "flags endpoint is disabled.") {
		t.Errorf("disabled PUT = %d %q, want 405", rec.Code, rec.Body.String())
	}
	if len(*set) != 0 {
		t.Errorf("a disabled handler set the verbosity: %v", *set)
	}
	noSetter, _ := debugRoutes(t, Config{}, true)
	if rec := do(noSetter, "PUT", "/debug/flags/v", "4"); rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Body.String(), "cannot change its verbosity") {
		t.Errorf("PUT without a setter = %d %q, want 405 saying why", rec.Code, rec.Body.String())
	}
	s := NewSecure(SecureDeps{Pods: podsFixed{}, Client: (&fakeAPI{}).client(t)}, logr.Discard(),
		Config{EnableDebugFlagsHandler: ptr.To(true), CertDir: t.TempDir()})
	if _, _, err := s.build(); err == nil || !strings.Contains(err.Error(), "enableDebugFlagsHandler") {
		t.Errorf("build with enableDebugFlagsHandler true and no setter = %v, want an error naming it", err)
	}
}
