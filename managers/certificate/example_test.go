package certificate_test

import (
	"fmt"

	"github.com/nodekit/nodekit/managers/certificate"
)

// A node that joins with a bootstrap token names where its kubeconfig is to
// be written and where its certificates go.
func ExampleConfig_Validate() {
	cfg := certificate.Config{
		NodeName:            "edge-1",
		BootstrapKubeconfig: "/etc/nodekit/bootstrap-kubeconfig",
		RotateCertificates:  true,
		CertDir:             "/var/lib/nodekit/pki",
	}
	fmt.Println(cfg.Enabled(), cfg.Validate())
	cfg.Kubeconfig = "/etc/nodekit/kubeconfig"
	fmt.Println(cfg.Validate())
	// Output:
	// true certificate: bootstrapKubeconfig needs kubeconfig (the bootstrap writes it there)
	// <nil>
}
