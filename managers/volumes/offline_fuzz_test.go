package volumes

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzOfflineTokenExpiry feeds arbitrary JWT claims and expiration
// timestamps, as an offline copy of a service-account token holds them, to
// the expiry check getToken makes before it serves the copy. No panic; a
// token whose exp claim (a JSON number) or whose status expiration has
// passed is never served; a known expiry is never after the status's.
func FuzzOfflineTokenExpiry(f *testing.F) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC).Unix()
	f.Add([]byte(`{"aud":["api"],"exp":1796558400,"iat":1796554800,"sub":"system:serviceaccount:ns:default"}`), int64(0), now)
	f.Add([]byte(`{"exp":1796558400}`), now-60, now)
	f.Add([]byte(`{"exp":1796558400}`), now+3600, now)
	f.Add([]byte(`{"exp":1.5}`), int64(0), now)
	f.Add([]byte(`{"exp":-1}`), int64(0), now)
	f.Add([]byte(`{"exp":1e300}`), int64(0), now)
	f.Add([]byte(`{"exp":9223372036854775807}`), int64(0), now)
	f.Add([]byte(`{"exp":"1796558400"}`), int64(0), now)
	f.Add([]byte(`{"exp":null}`), int64(0), now)
	f.Add([]byte(`not json`), now-1, now)
	f.Fuzz(func(t *testing.T, claims []byte, statusExp, nowSecs int64) {
		// Keep times where time.Unix and metav1.Time behave: years 1..9999.
		const lo, hi = -62135596800, 253402300799
		if statusExp != 0 && (statusExp < lo || statusExp > hi) || nowSecs < 0 || nowSecs > hi {
			t.Skip()
		}
		tr := &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
			Token: "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(claims) + ".c2ln",
		}}
		if statusExp != 0 {
			tr.Status.ExpirationTimestamp = metav1.NewTime(time.Unix(statusExp, 0))
		}
		now := time.Unix(nowSecs, 0)
		exp, known := tokenExpiry(tr)
		served := !known || now.Before(exp)
		if known && statusExp != 0 && exp.After(time.Unix(statusExp, 0)) {
			t.Fatalf("expiry %v is after the status's %v", exp, time.Unix(statusExp, 0))
		}
		if statusExp != 0 && !now.Before(time.Unix(statusExp, 0)) && served {
			t.Fatalf("token served at %v though its status expired at %v", now, time.Unix(statusExp, 0))
		}
		var c struct {
			Exp any `json:"exp"`
		}
		if json.Unmarshal(claims, &c) != nil {
			return
		}
		if e, ok := c.Exp.(float64); ok && e > 0 && float64(nowSecs) >= e && served {
			t.Fatalf("token served at %v though its exp claim %v has passed (expiry %v, known %v)", now, e, exp, known)
		}
	})
}
