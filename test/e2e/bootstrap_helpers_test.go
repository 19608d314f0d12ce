//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// defaultControllerManager is where hack/build-control-plane.sh caches
// kube-controller-manager (hack/lib.sh: $NODEKIT_CACHE/bin/kube-1.37.2);
// NODEKIT_KUBE_CONTROLLER_MANAGER_BIN wins.
func defaultControllerManager() string {
	cache := os.Getenv("NODEKIT_CACHE")
	if cache == "" {
		cache = "/var/cache/nodekit"
	}
	return filepath.Join(cache, "bin", "kube-1.37.2", "kube-controller-manager")
}

// startCSRSigner runs kube-controller-manager with only its CSR signing
// controller, signing with the cluster CA for signingDuration, until the
// test ends. Like loadCluster it skips (fails under CI=true) without the
// binary.
func startCSRSigner(t *testing.T, c clusterEnv, signingDuration time.Duration) {
	t.Helper()
	bin := os.Getenv("NODEKIT_KUBE_CONTROLLER_MANAGER_BIN")
	if bin == "" {
		bin = defaultControllerManager()
	}
	if _, err := os.Stat(bin); err != nil {
		fail := t.Skipf
		if os.Getenv("CI") == "true" {
			fail = t.Fatalf
		}
		fail("no kube-controller-manager (%v): build it with hack/build-control-plane.sh or set NODEKIT_KUBE_CONTROLLER_MANAGER_BIN", err)
	}
	pki := filepath.Dir(c.caFile)
	logFile, err := os.Create(filepath.Join(t.TempDir(), "kube-controller-manager.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--kubeconfig="+c.adminKubeconfig,
		"--controllers=csrsigning",
		"--cluster-signing-cert-file="+filepath.Join(pki, "ca.crt"),
		"--cluster-signing-key-file="+filepath.Join(pki, "ca.key"),
		"--cluster-signing-duration="+signingDuration.String(),
		"--leader-elect=false",
		"--secure-port=0",
		"--v=2")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kube-controller-manager: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("kube-controller-manager log (tail):\n%s", tail(string(b), 4000))
		}
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// bootstrapToken creates a bootstrap token secret in kube-system and the
// binding that lets system:bootstrappers create CSRs, and returns the
// token; both go when the test ends.
func bootstrapToken(t *testing.T, c clusterEnv) (id, token string) {
	t.Helper()
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 22)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	id, secret := string(b[:6]), string(b[6:])
	ctx := context.Background()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": id, "token-secret": secret, "usage-bootstrap-authentication": "true",
			"expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}
	if _, err := c.admin.CoreV1().Secrets("kube-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create bootstrap token: %v", err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nodekit-e2e-bootstrap-" + id},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "system:bootstrap:" + id}},
	}
	if _, err := c.admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bind system:node-bootstrapper: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.admin.CoreV1().Secrets("kube-system").Delete(ctx, s.Name, metav1.DeleteOptions{})
		_ = c.admin.RbacV1().ClusterRoleBindings().Delete(ctx, crb.Name, metav1.DeleteOptions{})
	})
	return id, id + "." + secret
}

// writeBootstrapKubeconfig writes a kubeconfig for the cluster that
// authenticates with token only.
func writeBootstrapKubeconfig(t *testing.T, c clusterEnv, path, token string) {
	t.Helper()
	admin, err := clientcmd.BuildConfigFromFlags("", c.adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["lab"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthority: c.caFile}
	kc.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["lab"] = &clientcmdapi.Context{Cluster: "lab", AuthInfo: "bootstrap"}
	kc.CurrentContext = "lab"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
}

// approvedCSR is a node client CSR the test approved.
type approvedCSR struct {
	name, username string
	at             time.Time
}

// csrApprover approves the kube-apiserver-client-kubelet CSRs of one node
// (from its bootstrap user or the node itself) after checking what they
// ask for, as a cluster's approver would; problems go to errs.
type csrApprover struct {
	mu       sync.Mutex
	approved []approvedCSR
	errs     []string
}

func (a *csrApprover) list() ([]approvedCSR, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.approved), slices.Clone(a.errs)
}

// deleteAll deletes the CSRs it approved (they are cluster-scoped).
func (a *csrApprover) deleteAll(c clusterEnv) {
	all, _ := a.list()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, csr := range all {
		_ = c.admin.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.name, metav1.DeleteOptions{})
	}
}

// run approves until ctx ends.
func (a *csrApprover) run(ctx context.Context, c clusterEnv, node string, users ...string) {
	seen := map[string]bool{}
	for ctx.Err() == nil {
		l, err := c.admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range l.Items {
				csr := &l.Items[i]
				if seen[csr.Name] || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || !slices.Contains(users, csr.Spec.Username) {
					continue
				}
				seen[csr.Name] = true
				if problem := checkNodeClientCSR(csr, node); problem != "" {
					a.mu.Lock()
					a.errs = append(a.errs, csr.Name+": "+problem)
					a.mu.Unlock()
					continue
				}
				csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
					Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "NodekitE2E", Message: "approved by the e2e test"})
				if _, err := c.admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
					seen[csr.Name] = false
					continue
				}
				a.mu.Lock()
				a.approved = append(a.approved, approvedCSR{name: csr.Name, username: csr.Spec.Username, at: time.Now()})
				a.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkNodeClientCSR returns what is wrong with a node's client CSR, or "".
func checkNodeClientCSR(csr *certificatesv1.CertificateSigningRequest, node string) string {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		return "no PEM request"
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err.Error()
	}
	if req.Subject.CommonName != "system:node:"+node || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return fmt.Sprintf("subject %s, want CN=system:node:%s, O=system:nodes", req.Subject, node)
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return "a client certificate request with subject alternative names"
	}
	u := csr.Spec.Usages
	if !slices.Contains(u, certificatesv1.UsageDigitalSignature) || !slices.Contains(u, certificatesv1.UsageClientAuth) || slices.Contains(u, certificatesv1.UsageServerAuth) {
		return fmt.Sprintf("usages %v, want digital signature and client auth", u)
	}
	return ""
}

// currentClientCert reads dir/kubelet-client-current.pem: its target and
// its certificate.
func currentClientCert(dir string) (string, *x509.Certificate, error) {
	link := filepath.Join(dir, "kubelet-client-current.pem")
	target, err := os.Readlink(link)
	if err != nil {
		return "", nil, err
	}
	b, err := os.ReadFile(link)
	if err != nil {
		return "", nil, err
	}
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return target, nil, fmt.Errorf("%s holds no certificate", link)
		}
		if block.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(block.Bytes)
			return target, cert, err
		}
	}
}

// pemHasKey reports whether path holds a private key as well.
func pemHasKey(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(b), "PRIVATE KEY-----")
}

// waitNodeReady waits for the node to be Ready in the API.
func waitNodeReady(t *testing.T, c clusterEnv, node string, timeout time.Duration) *corev1.Node {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, err := c.admin.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err == nil && nodeReady(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s not Ready within %s (last error %v)", node, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
