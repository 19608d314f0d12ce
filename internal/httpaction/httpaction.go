package httpaction

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NewRequest builds the GET request of get: the scheme in lower case (http
// by default), get's host or else podHost's answer (asked only then), the
// resolved port, the path, and get's headers (a Host header sets the
// request's host). User-Agent defaults to userAgent and Accept to "*/*";
// an Accept header with an empty value sends none. It does no I/O beyond
// what podHost does.
func NewRequest(ctx context.Context, get *corev1.HTTPGetAction, podHost func(context.Context) (string, error), port int, userAgent string) (*http.Request, error) {
	scheme := strings.ToLower(string(get.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := get.Host
	if host == "" {
		var err error
		if host, err = podHost(ctx); err != nil {
			return nil, err
		}
	}
	u, err := url.Parse(get.Path)
	if err != nil {
		u = &url.URL{Path: get.Path}
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %w", u, err)
	}
	h := make(http.Header, len(get.HTTPHeaders)+2)
	for _, hh := range get.HTTPHeaders {
		h.Add(hh.Name, hh.Value)
	}
	if _, ok := h["User-Agent"]; !ok {
		h.Set("User-Agent", userAgent)
	}
	if _, ok := h["Accept"]; !ok {
		h.Set("Accept", "*/*")
	} else if h.Get("Accept") == "" {
		h.Del("Accept")
	}
	req.Header = h
	req.Host = h.Get("Host")
	return req, nil
}

// Host is a podHost that answers ip.
func Host(ip string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return ip, nil }
}
