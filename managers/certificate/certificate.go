package certificate

import (
	"errors"
	"fmt"
	"time"
)

// Names in CertDir, as the kubelet's.
const (
	// PairPrefix names the client certificate pairs in CertDir:
	// kubelet-client-DATE.pem and the symlink kubelet-client-current.pem.
	PairPrefix = "kubelet-client"
	// tmpKeyFile keeps the bootstrap key until its certificate comes.
	tmpKeyFile = "kubelet-client.key.tmp"
)

// Defaults of Config.
const (
	// DefaultBootstrapTimeout bounds the wait for the bootstrap CSR to be
	// approved and signed, as the kubelet's (one hour).
	DefaultBootstrapTimeout = time.Hour
	// DefaultExitAfter is how long the agent goes on without a valid client
	// certificate while the API server answers before the Manager fails, as
	// the kubelet's five minutes.
	DefaultExitAfter = 5 * time.Minute
	// DefaultCheckPeriod is how often the Manager's transport looks for a
	// new certificate, as the kubelet's ten seconds.
	DefaultCheckPeriod = 10 * time.Second
)

// ErrNoClientCertificate is returned by Manager.Run when the node has had
// no valid client certificate for ExitAfter while the API server answered.
var ErrNoClientCertificate = errors.New("no valid client certificate")

// Config configures the node's client credentials. The zero value turns
// both features off.
type Config struct {
	// NodeName is the node's name: the certificates are requested for
	// CN=system:node:NodeName, O=system:nodes. Required when a feature is on.
	// Defaults to none (nodekit.Config sets its own).
	NodeName string `json:"nodeName,omitempty"`
	// Kubeconfig is the node's kubeconfig (--kubeconfig): read when it is
	// valid, written by the TLS bootstrap otherwise. Required when a
	// feature is on. Defaults to none (nodekit.Config sets its own).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// BootstrapKubeconfig (--bootstrap-kubeconfig) holds the bootstrap
	// credentials (usually a bootstrap token) used to request the node's
	// client certificate when Kubeconfig is missing or invalid. Defaults to
	// none: no TLS bootstrap.
	BootstrapKubeconfig string `json:"bootstrapKubeconfig,omitempty"`
	// CertDir (--cert-dir) holds the client certificate pairs. Required
	// when a feature is on. Defaults to none (nodekit.Config sets ROOT/pki).
	CertDir string `json:"certDir,omitempty"`
	// RotateCertificates (--rotate-certificates) renews the client
	// certificate through a CSR before it expires and makes the clients
	// use the new one. Without a Kubeconfig (a standalone node) it does
	// nothing. Defaults to false, as the kubelet's flag.
	RotateCertificates bool `json:"rotateCertificates,omitempty"`
	// BootstrapTimeout bounds the wait for the bootstrap certificate.
	// Defaults to DefaultBootstrapTimeout.
	BootstrapTimeout time.Duration `json:"bootstrapTimeout,omitempty"`
	// ExitAfter is how long the node may run without a valid client
	// certificate, while the API server answers, before Manager.Run fails.
	// Defaults to DefaultExitAfter.
	ExitAfter time.Duration `json:"exitAfter,omitempty"`
	// CheckPeriod is how often the transport looks for a new certificate.
	// Defaults to DefaultCheckPeriod.
	CheckPeriod time.Duration `json:"checkPeriod,omitempty"`
}

// Enabled reports whether TLS bootstrap or rotation is on.
func (c Config) Enabled() bool { return c.BootstrapKubeconfig != "" || c.RotateCertificates }

// withDefaults fills in the durations.
func (c Config) withDefaults() Config {
	if c.BootstrapTimeout == 0 {
		c.BootstrapTimeout = DefaultBootstrapTimeout
	}
	if c.ExitAfter == 0 {
		c.ExitAfter = DefaultExitAfter
	}
	if c.CheckPeriod == 0 {
		c.CheckPeriod = DefaultCheckPeriod
	}
	return c
}

// Validate reports every invalid setting.
func (c Config) Validate() error {
	var errs []error
	if c.BootstrapKubeconfig != "" && c.Kubeconfig == "" {
		errs = append(errs, errors.New("certificate: bootstrapKubeconfig needs kubeconfig (the bootstrap writes it there)"))
	}
	if c.Enabled() {
		if c.CertDir == "" {
			errs = append(errs, errors.New("certificate: certDir is required with bootstrapKubeconfig or rotateCertificates"))
		}
		if c.NodeName == "" {
			errs = append(errs, errors.New("certificate: nodeName is required with bootstrapKubeconfig or rotateCertificates"))
		}
	}
	if c.BootstrapKubeconfig != "" && c.BootstrapKubeconfig == c.Kubeconfig {
		errs = append(errs, fmt.Errorf("certificate: bootstrapKubeconfig and kubeconfig are the same file %s (the bootstrap would overwrite its own credentials)", c.Kubeconfig))
	}
	for name, d := range map[string]time.Duration{"bootstrapTimeout": c.BootstrapTimeout, "exitAfter": c.ExitAfter, "checkPeriod": c.CheckPeriod} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("certificate: %s %s must not be negative", name, d))
		}
	}
	return errors.Join(errs...)
}
