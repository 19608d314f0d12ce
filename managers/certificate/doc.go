// Package certificate gives the node client credentials that do not expire,
// as the kubelet's pkg/kubelet/certificate: TLS bootstrap and client
// certificate rotation, both built on client-go's util/certificate
// (certificate manager and file store) and util/certificate/csr.
//
// Where it sits: the composition root calls Bootstrap before it builds the
// Kubernetes client, then, with rotation on, wraps the client's rest.Config
// with a Manager so that every API client of the agent (pod source, status
// manager, node status, the secure server's reviews) presents the current
// certificate. The Manager runs with the other subsystems.
//
//   - TLS bootstrap (Config.BootstrapKubeconfig): when Config.Kubeconfig is
//     missing or its client certificate cannot be read or has expired, a
//     key is made (kept in CertDir/kubelet-client.key.tmp until the
//     certificate comes, so a restart reuses the same request), a
//     CertificateSigningRequest for signer
//     kubernetes.io/kube-apiserver-client-kubelet, subject
//     CN=system:node:NODE, O=system:nodes, usages digital signature and
//     client auth (and key encipherment for an RSA key) is created with the
//     bootstrap credentials, and once it is approved and signed the pair is
//     stored as CertDir/kubelet-client-DATE.pem with the symlink
//     kubelet-client-current.pem, and Config.Kubeconfig is written to use
//     it, with the server and CA of the bootstrap kubeconfig.
//   - Rotation (Config.RotateCertificates): client-go's certificate manager
//     requests a new certificate through a new CSR at 70 to 90 % of the
//     current one's lifetime; the Manager's transport hands the current
//     certificate to every TLS handshake and closes the open connections
//     when it changes, so the clients use the new one without a restart.
//     If no valid certificate is left for five minutes while the API server
//     answers, Run fails (the kubelet exits then), so that a restart can
//     bootstrap again.
//
// Extending: an embedder with its own credentials (an HSM, a cloud
// identity) leaves these off and sets the kubeconfig; Manager's transport
// is only used when rotation is on.
//
// Concurrency: Bootstrap blocks until the certificate is written or ctx
// ends. A Manager is safe for concurrent use; its RESTConfig may be used by
// any number of clients.
package certificate
