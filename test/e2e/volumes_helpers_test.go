//go:build e2e

package e2e

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nodekit/nodekit"
)

// startWithOptions runs the agent like startWith, with extra fx options
// (an fx.Populate to reach a subsystem).
func (h *agentHarness) startWithOptions(mutate func(*nodekit.Config), opts ...fx.Option) {
	h.t.Helper()
	h.port = freePort(h.t)
	log := funcr.New(func(prefix, args string) {
		h.logs.WriteString(time.Now().Format("15:04:05.000") + " " + prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 4})
	cfg := h.config()
	if mutate != nil {
		mutate(&cfg)
	}
	h.app = nodekit.New(cfg, log, append([]fx.Option{nodekit.Defaults()}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.app.Start(ctx); err != nil {
		h.t.Fatalf("start agent: %v", err)
	}
}

// clusterCA is the PEM of the control plane's CA, what the
// kube-root-ca.crt ConfigMap publishes.
func clusterCA(t testing.TB, c clusterEnv) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.adminKubeconfig)
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	if len(cfg.CAData) > 0 {
		return string(cfg.CAData)
	}
	b, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		t.Fatalf("read the cluster CA: %v", err)
	}
	return string(b)
}

// createAPIPod creates pod through the admin client.
func createAPIPod(t testing.TB, c clusterEnv, pod *corev1.Pod) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.admin.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
}

// podEvents returns "Type Reason: message" of the pod's events, sorted.
func podEvents(t testing.TB, c clusterEnv, ns, pod string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := c.admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod).String()})
	if err != nil {
		t.Logf("list events: %v", err)
		return nil
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Type+" "+e.Reason+": "+e.Message)
	}
	sort.Strings(out)
	return out
}

// waitExec runs cmd in the container until its output satisfies cond,
// and returns the output and how long it took.
func (h *agentHarness) waitExec(pod *corev1.Pod, container string, timeout time.Duration, what string, cond func(string) bool, cmd ...string) (string, time.Duration) {
	h.t.Helper()
	start := time.Now()
	var out string
	for time.Since(start) < timeout {
		var err error
		out, err = h.execOut(pod, container, cmd...)
		if err == nil && cond(out) {
			return out, time.Since(start)
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.t.Fatalf("%s: %v in %s did not happen within %s; last output %q", what, cmd, container, timeout, out)
	return "", 0
}

// containerInstance is a container's ID and restart count.
func containerInstance(p *corev1.Pod, container string) (string, int32) {
	st := statusOf(p, container)
	if st == nil {
		return "", -1
	}
	return st.ContainerID, st.RestartCount
}

// hasLine reports whether text has a line containing all parts.
func hasLine(text string, parts ...string) bool {
	for _, l := range strings.Split(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}
