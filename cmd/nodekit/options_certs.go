package main

import (
	"github.com/spf13/pflag"

	"github.com/nodekit/nodekit"
)

// certOptions are the flags of the node's client credentials.
type certOptions struct {
	bootstrapKubeconfig string
	rotateCertificates  bool
}

// addCertFlags adds the TLS bootstrap and client certificate rotation
// flags, named as the kubelet's (--cert-dir is the server's, shared).
func (o *options) addCertFlags(fs *pflag.FlagSet) {
	c := &o.certs
	fs.StringVar(&c.bootstrapKubeconfig, "bootstrap-kubeconfig", "", "kubeconfig with bootstrap credentials (e.g. a bootstrap token): when --kubeconfig is missing or its client certificate is invalid or expired, request the node's client certificate with a kubernetes.io/kube-apiserver-client-kubelet CSR, store it in --cert-dir and write --kubeconfig to use it")
	fs.BoolVar(&c.rotateCertificates, "rotate-certificates", false, "renew the client certificate through a CSR at 70-90% of its lifetime; the API clients use the new one without a restart")
}

// applyCerts sets cfg.Certificates from the flags.
func (o *options) applyCerts(cfg *nodekit.Config) {
	cfg.Certificates.BootstrapKubeconfig = o.certs.bootstrapKubeconfig
	cfg.Certificates.RotateCertificates = o.certs.rotateCertificates
}
