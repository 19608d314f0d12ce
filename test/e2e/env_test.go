//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// envPod is an API pod whose container prints its environment, then a
// marker, then waits.
func (h *agentHarness) envPod(ns, name string, env []corev1.EnvVar, from []corev1.EnvFromSource) *corev1.Pod {
	p := h.apiPod(ns, name, 2)
	c := &p.Spec.Containers[0]
	c.Command = []string{"sh", "-c", "env; echo ENV-DONE; trap 'exit 0' TERM; sleep 3600 & wait"}
	c.Env, c.EnvFrom = env, from
	return p
}

// apiEnv waits until the running pod's container has printed its
// environment and returns it as a map.
func (h *agentHarness) apiEnv(p *corev1.Pod) map[string]string {
	h.t.Helper()
	path := filepath.Join(h.rootDir, "logs", p.Namespace+"_"+p.Name+"_"+string(p.UID), "main", "0.log")
	deadline := time.Now().Add(settle)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), "ENV-DONE") {
			out := map[string]string{}
			for _, line := range strings.Split(string(b), "\n") {
				// CRI log lines: "<time> stdout F <text>".
				parts := strings.SplitN(line, " ", 4)
				if len(parts) < 4 {
					continue
				}
				if k, v, ok := strings.Cut(parts[3], "="); ok {
					out[k] = v
				}
			}
			return out
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no environment in %s within %s (err %v)", path, settle, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func createOrFail(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func cmRef(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
}

func secRef(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
}

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
}

func resRef(res, divisor string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: res, Divisor: resource.MustParse(divisor)}}
}

// TestEnvFromAPIObjectsAndTheDownwardAPI is issue 12 acceptance 3 (env):
// every env source, the optional and missing cases, and status.hostIP as
// the node IP.
func TestEnvFromAPIObjectsAndTheDownwardAPI(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	ctx := context.Background()
	_, err := c.admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "env-cm"},
		Data: map[string]string{"color": "blue", "size": "L"}}, metav1.CreateOptions{})
	createOrFail(t, err)
	_, err = c.admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "env-sec"},
		Data: map[string][]byte{"password": []byte("s3cret")}}, metav1.CreateOptions{})
	createOrFail(t, err)
	h.start()

	env := []corev1.EnvVar{
		{Name: "COLOR", ValueFrom: cmRef("env-cm", "color", false)},
		{Name: "PASSWORD", ValueFrom: secRef("env-sec", "password", false)},
		{Name: "OPT_NO_KEY", ValueFrom: cmRef("env-cm", "absent", true)},
		{Name: "OPT_NO_CM", ValueFrom: cmRef("no-such-cm", "k", true)},
		{Name: "OPT_NO_SECRET", ValueFrom: secRef("no-such-secret", "k", true)},
		{Name: "OPT_NO_SECRET_KEY", ValueFrom: secRef("env-sec", "absent", true)},
		{Name: "EXPANDED", Value: "$(COLOR)-$(CM_size)"},
		{Name: "POD_NAME", ValueFrom: fieldRef("metadata.name")},
		{Name: "POD_NS", ValueFrom: fieldRef("metadata.namespace")},
		{Name: "POD_UID", ValueFrom: fieldRef("metadata.uid")},
		{Name: "APP", ValueFrom: fieldRef("metadata.labels['app']")},
		{Name: "NOTE", ValueFrom: fieldRef("metadata.annotations['note']")},
		{Name: "NODE", ValueFrom: fieldRef("spec.nodeName")},
		{Name: "SA", ValueFrom: fieldRef("spec.serviceAccountName")},
		{Name: "POD_IP", ValueFrom: fieldRef("status.podIP")},
		{Name: "POD_IPS", ValueFrom: fieldRef("status.podIPs")},
		{Name: "HOST_IP", ValueFrom: fieldRef("status.hostIP")},
		{Name: "HOST_IPS", ValueFrom: fieldRef("status.hostIPs")},
		{Name: "MEM_LIMIT_MI", ValueFrom: resRef("limits.memory", "1Mi")},
		{Name: "CPU_REQUEST_M", ValueFrom: resRef("requests.cpu", "1m")},
		{Name: "CPU_LIMIT", ValueFrom: resRef("limits.cpu", "1")},
	}
	from := []corev1.EnvFromSource{
		{Prefix: "CM_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "env-cm"}}},
		{Prefix: "SEC_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "env-sec"}}},
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "no-such-cm"}, Optional: ptrTo(true)}},
	}
	pod := h.envPod(ns, "env", env, from)
	pod.Labels = map[string]string{"app": "envtest"}
	pod.Annotations = map[string]string{"note": "hello"}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	_, err = c.admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	createOrFail(t, err)
	p := waitAPIPod(t, c, ns, "env", settle, "Running", apiRunning)
	got := h.apiEnv(p)
	node, err := c.admin.CoreV1().Nodes().Get(ctx, h.node, metav1.GetOptions{})
	createOrFail(t, err)
	cpus := node.Status.Allocatable.Cpu().Value()
	want := map[string]string{
		"COLOR": "blue", "PASSWORD": "s3cret", "CM_color": "blue", "CM_size": "L", "SEC_password": "s3cret",
		"EXPANDED": "blue-L", "POD_NAME": "env", "POD_NS": ns, "POD_UID": string(p.UID), "APP": "envtest", "NOTE": "hello",
		"NODE": h.node, "SA": "default", "POD_IP": p.Status.PodIP, "POD_IPS": p.Status.PodIP,
		"HOST_IP": "127.0.0.1", "HOST_IPS": "127.0.0.1", "MEM_LIMIT_MI": "64", "CPU_REQUEST_M": "100",
		"CPU_LIMIT": fmt.Sprint(cpus),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"OPT_NO_KEY", "OPT_NO_CM", "OPT_NO_SECRET", "OPT_NO_SECRET_KEY"} {
		if v, ok := got[k]; ok {
			t.Errorf("optional missing %s is set (%q), want it left out", k, v)
		}
	}
	if p.Status.HostIP != "127.0.0.1" {
		t.Errorf("status.hostIP = %q, want the node IP", p.Status.HostIP)
	}

	// A hostNetwork pod has the node IP as its pod IP, in status and env.
	hn := h.envPod(ns, "hostnet", []corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: fieldRef("status.podIP")}, {Name: "HOST_IP", ValueFrom: fieldRef("status.hostIP")},
	}, nil)
	hn.Spec.HostNetwork = true
	_, err = c.admin.CoreV1().Pods(ns).Create(ctx, hn, metav1.CreateOptions{})
	createOrFail(t, err)
	p = waitAPIPod(t, c, ns, "hostnet", settle, "Running", apiRunning)
	got = h.apiEnv(p)
	if p.Status.PodIP != "127.0.0.1" || got["POD_IP"] != "127.0.0.1" || got["HOST_IP"] != "127.0.0.1" {
		t.Errorf("hostNetwork pod: status.podIP %q, env POD_IP %q HOST_IP %q; want the node IP 127.0.0.1", p.Status.PodIP, got["POD_IP"], got["HOST_IP"])
	}
}

// TestMissingEnvKeyWaitsWithCreateContainerConfigErrorThenStarts is issue
// 12 acceptance 3 (missing cases): a missing configMap, then a missing key,
// keep the container waiting with CreateContainerConfigError naming them;
// it starts once the key appears.
func TestMissingEnvKeyWaitsWithCreateContainerConfigErrorThenStarts(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	h.start()
	ctx := context.Background()
	pod := h.envPod(ns, "late", []corev1.EnvVar{
		{Name: "LATE", ValueFrom: cmRef("late-cm", "key", false)},
		{Name: "LATE_SECRET", ValueFrom: secRef("late-sec", "key", false)},
	}, nil)
	_, err := c.admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	createOrFail(t, err)
	waiting := func(msg string) func(*corev1.Pod, error) bool {
		return func(p *corev1.Pod, err error) bool {
			if err != nil || len(p.Status.ContainerStatuses) == 0 {
				return false
			}
			w := p.Status.ContainerStatuses[0].State.Waiting
			return w != nil && w.Reason == "CreateContainerConfigError" && w.Message == msg && p.Status.Phase == corev1.PodPending
		}
	}
	waitAPIPod(t, c, ns, "late", settle, "waiting for the missing configMap", waiting(`configmap "late-cm" not found`))

	_, err = c.admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late-cm"},
		Data: map[string]string{"other": "x"}}, metav1.CreateOptions{})
	createOrFail(t, err)
	waitAPIPod(t, c, ns, "late", settle, "waiting for the missing key", waiting("couldn't find key key in ConfigMap "+ns+"/late-cm"))

	_, err = c.admin.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late-cm"},
		Data: map[string]string{"key": "arrived"}}, metav1.UpdateOptions{})
	createOrFail(t, err)
	waitAPIPod(t, c, ns, "late", settle, "waiting for the missing secret", waiting(`secret "late-sec" not found`))

	_, err = c.admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late-sec"},
		Data: map[string][]byte{"key": []byte("also")}}, metav1.CreateOptions{})
	createOrFail(t, err)
	p := waitAPIPod(t, c, ns, "late", settle, "Running once the key exists", apiRunning)
	got := h.apiEnv(p)
	if got["LATE"] != "arrived" || got["LATE_SECRET"] != "also" {
		t.Errorf("LATE = %q, LATE_SECRET = %q; want arrived, also", got["LATE"], got["LATE_SECRET"])
	}
	if n := p.Status.ContainerStatuses[0].RestartCount; n != 0 {
		t.Errorf("restart count %d, want 0: the container never ran before", n)
	}
	// The objects were watched with the node's own credentials: the Node
	// authorizer let the per-object watches through.
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, "objects") && strings.Contains(line, "forbidden") {
			t.Errorf("an object watch was refused: %s", line)
		}
	}
}

// TestServiceEnvironment is issue 12 acceptance 4: KUBERNETES_SERVICE_HOST
// and _PORT always, and the service-link variables of a Service created in
// the namespace unless enableServiceLinks is false.
func TestServiceEnvironment(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	ns := h.joinCluster(c)
	ctx := context.Background()
	svc, err := c.admin.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "my-web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "none"}, Ports: []corev1.ServicePort{
			{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}, {Name: "metrics", Port: 9090, Protocol: corev1.ProtocolUDP},
		}},
	}, metav1.CreateOptions{})
	createOrFail(t, err)
	master, err := c.admin.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	createOrFail(t, err)
	h.start()

	_, err = c.admin.CoreV1().Pods(ns).Create(ctx, h.envPod(ns, "links", nil, nil), metav1.CreateOptions{})
	createOrFail(t, err)
	off := h.envPod(ns, "nolinks", nil, nil)
	off.Spec.EnableServiceLinks = ptrTo(false)
	_, err = c.admin.CoreV1().Pods(ns).Create(ctx, off, metav1.CreateOptions{})
	createOrFail(t, err)

	ip := svc.Spec.ClusterIP
	mport := fmt.Sprint(master.Spec.Ports[0].Port)
	always := map[string]string{
		"KUBERNETES_SERVICE_HOST": master.Spec.ClusterIP, "KUBERNETES_SERVICE_PORT": mport,
		"KUBERNETES_PORT": "tcp://" + master.Spec.ClusterIP + ":" + mport,
	}
	links := map[string]string{
		"MY_WEB_SERVICE_HOST": ip, "MY_WEB_SERVICE_PORT": "8080", "MY_WEB_SERVICE_PORT_HTTP": "8080",
		"MY_WEB_SERVICE_PORT_METRICS": "9090", "MY_WEB_PORT": "tcp://" + ip + ":8080",
		"MY_WEB_PORT_8080_TCP": "tcp://" + ip + ":8080", "MY_WEB_PORT_8080_TCP_PROTO": "tcp",
		"MY_WEB_PORT_8080_TCP_PORT": "8080", "MY_WEB_PORT_8080_TCP_ADDR": ip,
		"MY_WEB_PORT_9090_UDP": "udp://" + ip + ":9090", "MY_WEB_PORT_9090_UDP_PROTO": "udp",
	}
	got := h.apiEnv(waitAPIPod(t, c, ns, "links", settle, "Running", apiRunning))
	for _, want := range []map[string]string{always, links} {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("links: %s = %q, want %q", k, got[k], v)
			}
		}
	}
	got = h.apiEnv(waitAPIPod(t, c, ns, "nolinks", settle, "Running", apiRunning))
	for k, v := range always {
		if got[k] != v {
			t.Errorf("nolinks: %s = %q, want %q", k, got[k], v)
		}
	}
	for k := range links {
		if _, ok := got[k]; ok {
			t.Errorf("nolinks: %s is set with enableServiceLinks false", k)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
