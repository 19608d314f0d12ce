package server

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	cliflag "k8s.io/component-base/cli/flag"
)

// DefaultTLSCipherSuites are the TLS 1.2 cipher suites of the secure port
// when Config.TLSCipherSuites is empty: ECDHE key exchange with an AEAD
// cipher only. Go's default list, which the kubelet keeps, also has the
// ECDHE CBC suites with SHA-1 MACs; they are left out here.
var DefaultTLSCipherSuites = []string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
}

// tlsSettings parses TLSMinVersion and TLSCipherSuites with the kubelet's
// parsers (k8s.io/component-base/cli/flag), refusing, unlike the kubelet,
// which only logs them, the versions before TLS 1.2 and the suites Go
// calls insecure. It returns the minimum version and the suites (nil with
// TLS 1.3 as the minimum: its suites are not configurable).
func (c Config) tlsSettings() (uint16, []uint16, error) {
	min, err := cliflag.TLSVersion(c.TLSMinVersion)
	if err != nil {
		return 0, nil, fmt.Errorf("server tlsMinVersion %q: %w (want one of VersionTLS12, VersionTLS13)", c.TLSMinVersion, err)
	}
	if min < tls.VersionTLS12 {
		return 0, nil, fmt.Errorf("server tlsMinVersion %q is refused: TLS before 1.2 is insecure (want VersionTLS12 or VersionTLS13)", c.TLSMinVersion)
	}
	names := c.TLSCipherSuites
	if len(names) == 0 {
		names = DefaultTLSCipherSuites
	}
	insecure := cliflag.InsecureTLSCiphers()
	var bad []string
	for _, n := range names {
		if _, ok := insecure[n]; ok {
			bad = append(bad, n)
		}
	}
	if len(bad) > 0 {
		return 0, nil, fmt.Errorf("server tlsCipherSuites: %s refused: Go lists them as insecure (crypto/tls InsecureCipherSuites)",
			strings.Join(bad, ", "))
	}
	suites, err := cliflag.TLSCipherSuites(names)
	if err != nil {
		return 0, nil, fmt.Errorf("server tlsCipherSuites: %w", err)
	}
	if min == tls.VersionTLS13 {
		return min, nil, nil
	}
	return min, suites, nil
}

// weakCipherSuites are the configured suites that are allowed but weak:
// CBC mode with a SHA-1 MAC. The secure server logs them at start.
func (c Config) weakCipherSuites() []string {
	var out []string
	for _, n := range c.TLSCipherSuites {
		if strings.Contains(n, "_CBC_") {
			out = append(out, n)
		}
	}
	return out
}

// tlsConfig is the secure port's TLS configuration: the configured
// versions and suites, client certificates asked for only when there is a
// client CA to verify them against (the authenticator verifies them, so
// that a request without one can still carry a bearer token), HTTP/1.1
// only (streams upgrade the connection).
func (c Config) tlsConfig(getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)) (*tls.Config, error) {
	min, suites, err := c.tlsSettings()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		MinVersion:     min,
		CipherSuites:   suites,
		GetCertificate: getCert,
		ClientAuth:     tls.NoClientCert,
		NextProtos:     []string{"http/1.1"},
	}
	if c.ClientCAFile != "" {
		cfg.ClientAuth = tls.RequestClientCert
	}
	return cfg, nil
}

// enabled is a *bool setting whose default is true.
func enabled(p *bool) bool {
	return p == nil || *p
}

// explicitlyOn reports whether a *bool setting was set to true.
func explicitlyOn(p *bool) bool {
	return p != nil && *p
}

// cipherSuiteNames names suites by their IANA names, for logs.
func cipherSuiteNames(ids []uint16) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, tls.CipherSuiteName(id))
	}
	slices.Sort(out)
	return out
}
