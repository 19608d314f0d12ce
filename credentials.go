package nodekit

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/certificate"
	"github.com/nodekit/nodekit/managers/nodestatus"
)

// apiCredentials are how the agent's API clients authenticate.
type apiCredentials struct {
	// rc is the clients' configuration; nil without a kubeconfig.
	rc *rest.Config
	// certs rotates the client certificate; nil when rotation is off.
	certs *certificate.Manager
}

// kubeCredentials runs the TLS bootstrap when it is configured and the
// kubeconfig is not valid (it blocks until the node's CSR is approved and
// signed, at most Certificates.BootstrapTimeout), then loads the
// kubeconfig; with RotateCertificates its clients go through the
// certificate manager's transport, which presents the current certificate.
func kubeCredentials(cfg Config, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger) (apiCredentials, error) {
	if cfg.Kubeconfig == "" {
		return apiCredentials{}, nil
	}
	log = log.WithName("certificate")
	// Bootstrap bounds its own wait; nothing else cancels start-up.
	if err := certificate.Bootstrap(context.Background(), clk, log, cfg.Certificates); err != nil {
		return apiCredentials{}, fmt.Errorf("TLS bootstrap with %s: %w", cfg.Certificates.BootstrapKubeconfig, err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return apiCredentials{}, fmt.Errorf("kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	rc.QPS = cfg.KubeAPIQPS
	rc.Burst = cfg.KubeAPIBurst
	rc.UserAgent = "nodekit/" + nodestatus.DefaultAgentVersion
	if !cfg.Certificates.RotateCertificates {
		return apiCredentials{rc: rc}, nil
	}
	m, err := certificate.NewManager(rc, clk, reg, log, cfg.Certificates)
	if errors.Is(err, certificate.ErrNothingToRotate) {
		log.Info("Client certificate rotation is off: the kubeconfig authenticates without a client certificate", "kubeconfig", cfg.Kubeconfig)
		return apiCredentials{rc: rc}, nil
	}
	if err != nil {
		return apiCredentials{}, err
	}
	log.Info("Client certificate rotation is on", "certDir", cfg.Certificates.CertDir)
	return apiCredentials{rc: m.RESTConfig(rc), certs: m}, nil
}
