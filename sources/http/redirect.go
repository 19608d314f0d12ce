package http

import (
	"errors"
	"fmt"
	nethttp "net/http"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects a read follows, Go's default.
const maxRedirects = 10

// errDowngrade is a redirect from https to http.
var errDowngrade = errors.New("a downgrade from https to http is refused")

// redirectPolicy is the client's CheckRedirect for a read with the
// configured header: it refuses a redirect from https to http anywhere in
// the chain (a manifest in clear can be rewritten on the way, whatever its
// headers), and once the chain leaves the origin (scheme, host and port) of
// the configured URL, it drops every configured header from that hop and the
// later ones, as curl drops credentials on a redirect to another host, port
// or scheme. Go's own rule drops only Authorization, Www-Authenticate and
// cookies, and only for another host; a custom header (an API key, say) is
// as secret. It follows at most 10 redirects, as Go's default does.
func redirectPolicy(header nethttp.Header) func(*nethttp.Request, []*nethttp.Request) error {
	return func(req *nethttp.Request, via []*nethttp.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		first := via[0].URL
		left := origin(req.URL) != origin(first)
		for _, prev := range via {
			if prev.URL.Scheme == "https" && req.URL.Scheme == "http" {
				return fmt.Errorf("redirect from %s to %s: %w", prev.URL.Redacted(), req.URL.Redacted(), errDowngrade)
			}
			left = left || origin(prev.URL) != origin(first)
		}
		if left {
			for k := range header {
				req.Header.Del(k)
			}
		}
		return nil
	}
}

// origin is a URL's scheme, host and port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
