package server

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// FuzzParseLogQuery feeds raw /containerLogs query strings to the parser.
// It must never panic; a query it accepts must satisfy the API server's
// checks of PodLogOptions, and one it refuses gets a 400 or a 422.
func FuzzParseLogQuery(f *testing.F) {
	for _, seed := range []string{
		"", "tail=all", "tailLines=2", "tail=10&stream=Stdout", "limitBytes=5&follow=true", "previous=1&timestamps=t",
		"sinceSeconds=10", "sinceTime=2026-12-01T10:00:01Z", "sinceSeconds=1&sinceTime=2026-12-01T10:00:01Z",
		"stream=Stderr&tailLines=1", "tailLines=-1", "limitBytes=0", "follow=maybe", "sinceSeconds=9223372036854775807",
		"stream=Bogus", "tailLines=1&tailLines=2", "tail=", "insecureSkipTLSVerifyBackend=true", "%zz",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		before := q.Encode()
		lr, code, err := parseLogQuery(q)
		if q.Encode() != before {
			t.Fatalf("parseLogQuery changed its input: %q to %q", before, q.Encode())
		}
		if err != nil {
			if code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
				t.Fatalf("query %q: error %v with code %d, want 400 or 422", raw, err, code)
			}
			return
		}
		if code != 0 {
			t.Fatalf("query %q: accepted with code %d", raw, code)
		}
		o := lr.opts
		if verr := validateLogOptions(&o, lr.stream); verr != nil {
			t.Fatalf("query %q: accepted options fail validation: %v", raw, verr)
		}
		if o.TailLines != nil && *o.TailLines < 0 || o.LimitBytes != nil && *o.LimitBytes < 1 ||
			o.SinceSeconds != nil && *o.SinceSeconds < 1 || o.SinceSeconds != nil && o.SinceTime != nil {
			t.Fatalf("query %q: accepted %+v", raw, o)
		}
		switch lr.stream {
		case corev1.LogStreamAll, corev1.LogStreamStdout, corev1.LogStreamStderr:
		default:
			t.Fatalf("query %q: accepted stream %q", raw, lr.stream)
		}
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		cri := criLogOptions(&o, now)
		if o.SinceSeconds == nil && o.SinceTime == nil && !cri.Since.IsZero() {
			t.Fatalf("query %q: a since time %v without sinceSeconds or sinceTime", raw, cri.Since)
		}
	})
}
