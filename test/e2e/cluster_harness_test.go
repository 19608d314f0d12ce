//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// controlPlaneEnvFile is where hack/control-plane-up.sh writes its env.
var controlPlaneEnvFile = labFile("control-plane/env")

// clusterEnv is the private kube-apiserver the cluster tests join.
type clusterEnv struct {
	adminKubeconfig string
	credentials     string // hack/node-credentials.sh
	up, down        string // control-plane-up.sh / -down.sh
	kubectl         string // kubectl of the cluster's version (hack/build-control-plane.sh)
	caFile          string // the cluster CA; its directory holds the control plane's PKI
	admin           kubernetes.Interface
}

// loadCluster finds the control plane; like loadEnv, it fails under CI=true
// and skips otherwise when there is none.
func loadCluster(t testing.TB) clusterEnv {
	t.Helper()
	vars := map[string]string{}
	if f, err := os.Open(controlPlaneEnvFile); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "="); ok && !strings.HasPrefix(k, "#") {
				vars[k] = v
			}
		}
		f.Close()
	}
	get := func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return vars[k]
	}
	env := clusterEnv{adminKubeconfig: get("NODEKIT_KUBECONFIG"), credentials: get("NODEKIT_NODE_CREDENTIALS"),
		up: get("NODEKIT_CONTROL_PLANE_UP"), down: get("NODEKIT_CONTROL_PLANE_DOWN"),
		kubectl: get("NODEKIT_KUBECTL"), caFile: get("NODEKIT_KUBE_CA_FILE")}
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	if env.adminKubeconfig == "" {
		fail("no control plane: run hack/control-plane-up.sh (it writes %s)", controlPlaneEnvFile)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env.adminKubeconfig)
	if err == nil {
		env.admin, err = kubernetes.NewForConfig(cfg)
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = env.admin.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	}
	if err != nil {
		fail("control plane at %s is not ready: %v", env.adminKubeconfig, err)
	}
	return env
}

// joinCluster gives the harness's agent its own node credentials and a
// namespace with what kube-controller-manager would put there (the default
// ServiceAccount and the kube-root-ca.crt ConfigMap, which the
// kube-api-access token volume reads), and returns the namespace.
func (h *agentHarness) joinCluster(c clusterEnv) string {
	h.t.Helper()
	dir := filepath.Join(filepath.Dir(h.manifests), "node-credentials")
	out, err := exec.Command("bash", c.credentials, h.node, dir).CombinedOutput()
	if err != nil {
		h.t.Fatalf("mint node credentials: %v\n%s", err, out)
	}
	h.kubeconfig = filepath.Join(dir, "kubeconfig")
	h.clientCAFile = c.caFile
	ns := h.node
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		h.t.Fatalf("create namespace: %v", err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := c.admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		h.t.Fatalf("create service account: %v", err)
	}
	rootCA := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: ns},
		Data: map[string]string{"ca.crt": clusterCA(h.t, c)}}
	if _, err := c.admin.CoreV1().ConfigMaps(ns).Create(ctx, rootCA, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		h.t.Fatalf("create kube-root-ca.crt: %v", err)
	}
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		grace := int64(0)
		_ = c.admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{GracePeriodSeconds: &grace})
		_ = c.admin.CoreV1().Nodes().Delete(ctx, h.node, metav1.DeleteOptions{})
	})
	return ns
}

// apiPod is a busybox pod bound to the harness's node. Like a pod users
// write, it leaves automountServiceAccountToken alone: the API server's
// ServiceAccount admission gives it the kube-api-access token volume.
func (h *agentHarness) apiPod(ns, name string, grace int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName:                      h.node,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "main", Image: h.env.Image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"},
			}},
		},
	}
}

// waitAPIPod polls the API server until the pod satisfies cond.
func waitAPIPod(t testing.TB, c clusterEnv, ns, name string, timeout time.Duration, what string, cond func(*corev1.Pod, error) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	var lastErr error
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p, err := c.admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		cancel()
		last, lastErr = p, err
		if cond(p, err) {
			return p
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("pod %s/%s: %s did not happen within %s; last: %s (err %v)", ns, name, what, timeout, describe(last), lastErr)
	return nil
}

func apiRunning(p *corev1.Pod, err error) bool {
	if err != nil || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.Status.HostIP == "" || p.Status.StartTime == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil
		}
	}
	return false
}
