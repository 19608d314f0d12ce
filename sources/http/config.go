package http

import (
	"errors"
	"fmt"
	nethttp "net/http"
	"net/url"
	"time"
)

// DefaultCheckPeriod is how often the URL is read, as the kubelet's
// httpCheckFrequency.
const DefaultCheckPeriod = 20 * time.Second

// Config holds the HTTP manifest source's settings.
type Config struct {
	// URL is where the pod manifest is read (the kubelet's staticPodURL):
	// an http or https URL serving a Pod or a PodList, YAML or JSON.
	// Required: there is no default.
	URL string `json:"url,omitempty"`
	// Header is sent with every request (the kubelet's
	// staticPodURLHeader), e.g. an Authorization header, but not past a
	// redirect that leaves the URL's scheme, host and port. Defaults to
	// none.
	Header nethttp.Header `json:"header,omitempty"`
	// NodeName is this node's name: pods are named "<name>-<lowercase node
	// name>" and bound to it. Required: there is no default.
	NodeName string `json:"nodeName,omitempty"`
	// CheckPeriod is how often the URL is read (the kubelet's
	// httpCheckFrequency). Defaults to 20s.
	CheckPeriod time.Duration `json:"checkPeriod,omitempty"`
	// Timeout bounds each request. Defaults to 10s, the kubelet's.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.URL == "" {
		return errors.New("http source: url is required")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return fmt.Errorf("http source: url %q: %w", c.URL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("http source: url %q must be an http or https URL with a host", c.URL)
	}
	if c.NodeName == "" {
		return errors.New("http source: nodeName is required")
	}
	if c.CheckPeriod < 0 {
		return fmt.Errorf("http source: checkPeriod %s must not be negative", c.CheckPeriod)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("http source: timeout %s must not be negative", c.Timeout)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.CheckPeriod == 0 {
		c.CheckPeriod = DefaultCheckPeriod
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	return c
}
