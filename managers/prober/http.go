package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodekit/nodekit/internal/httpaction"
)

// newHTTPTransport returns the transport of HTTP probes, configured as the
// kubelet's: no keep-alive (every probe opens a new connection), no proxy,
// no compression, and TLS without certificate verification.
func newHTTPTransport() *http.Transport {
	return &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet: probes do not verify.
		DisableKeepAlives:   true,
		Proxy:               nil,
		DisableCompression:  true,
		DialContext:         probeDialer().DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
	}
}

// newHTTPRequest builds the GET request of an httpGet probe
// (httpaction.NewRequest): the port by number or by the name of a
// container port, the host the probe's or else the pod IP, User-Agent
// userAgent unless the probe sets one.
func newHTTPRequest(ctx context.Context, get *corev1.HTTPGetAction, c *corev1.Container, podIP, userAgent string) (*http.Request, error) {
	port, err := resolvePort(get.Port, c)
	if err != nil {
		return nil, err
	}
	req, err := httpaction.NewRequest(ctx, get, httpaction.Host(podIP), port, userAgent)
	if err != nil {
		return nil, fmt.Errorf("build probe request: %w", err)
	}
	return req, nil
}

// probeHTTP sends req with the given timeout: a status from 200 to 399
// succeeds (a redirect left unfollowed is a success with a warning), any
// other status or a transport error (including the timeout) fails.
func probeHTTP(t http.RoundTripper, req *http.Request, timeout time.Duration) (outcome, string, error) {
	client := &http.Client{Transport: t, Timeout: timeout, CheckRedirect: sameHostRedirects}
	res, err := client.Do(req)
	if err != nil {
		return outcomeFailure, err.Error(), nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxOutput))
	if err != nil {
		return outcomeFailure, "", fmt.Errorf("read probe response from %s: %w", req.URL.Redacted(), err)
	}
	switch {
	case res.StatusCode >= http.StatusOK && res.StatusCode < http.StatusMultipleChoices:
		return outcomeSuccess, string(b), nil
	case res.StatusCode >= http.StatusMultipleChoices && res.StatusCode < http.StatusBadRequest:
		return outcomeWarning, "Probe terminated redirects, Response body: " + string(b), nil
	}
	return outcomeFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode), nil
}

// sameHostRedirects follows redirects to the probed host only, at most 10;
// the response redirecting elsewhere is returned as is.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// resolvePort returns the port number of a probe: the number itself, or the
// containerPort of the container port with that name.
func resolvePort(port intstr.IntOrString, c *corev1.Container) (int, error) {
	n := -1
	switch port.Type {
	case intstr.Int:
		n = port.IntValue()
	case intstr.String:
		found := false
		for _, p := range c.Ports {
			if p.Name == port.StrVal {
				n, found = int(p.ContainerPort), true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("resolve probe port of container %s: port %q not found", c.Name, port.StrVal)
		}
	}
	if n <= 0 || n >= 65536 {
		return n, fmt.Errorf("resolve probe port of container %s: invalid port number %d", c.Name, n)
	}
	return n, nil
}
