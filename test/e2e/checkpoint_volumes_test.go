//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/internal/mount"
)

// tokenPath is where the kube-api-access volume puts the token.
const tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// execByID runs cmd in the running container id and returns its stdout.
func (h *agentHarness) execByID(id string, cmd ...string) (string, error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stdout, stderr, err := h.env.runtime(h.t).ExecSync(ctx, id, cmd, 10*time.Second)
	if err != nil {
		return string(stdout) + string(stderr), err
	}
	return strings.TrimSpace(string(stdout)), nil
}

// removeAllVolumes unmounts and removes every pod's volume directory, as
// a reboot leaves the tmpfs volumes (and as a new disk would the rest).
func (h *agentHarness) removeAllVolumes() int {
	h.t.Helper()
	dirs, err := filepath.Glob(filepath.Join(h.rootDir, "pods", "*", "volumes"))
	if err != nil {
		h.t.Fatal(err)
	}
	for _, d := range dirs {
		if err := mount.UnmountBelow(d); err != nil {
			h.t.Fatalf("unmount %s: %v", d, err)
		}
		if err := os.RemoveAll(d); err != nil {
			h.t.Fatalf("remove %s: %v", d, err)
		}
	}
	return len(dirs)
}

// offlinePods are a pod with a secret and a configMap volume (and the
// default service-account token volume) and a pod whose env comes from
// the same secret and configMap.
func offlinePods(h *agentHarness, ns string) []*corev1.Pod {
	vols := h.apiPod(ns, "vols", 2)
	vols.Spec.Volumes = []corev1.Volume{
		{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
	}
	vols.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "creds", MountPath: "/etc/creds"}, {Name: "cfg", MountPath: "/etc/app"}}
	env := h.apiPod(ns, "env", 2)
	env.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "password"}}}}
	env.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{Prefix: "APP_", ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}
	return []*corev1.Pod{vols, env}
}

// offlineContents reads what each pod sees: the files of the volumes pod,
// the env of the env pod.
func (h *agentHarness) offlineContents(ids map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for what, c := range map[string]struct {
		pod string
		cmd []string
	}{
		"secret":    {"vols", []string{"cat", "/etc/creds/password"}},
		"configMap": {"vols", []string{"cat", "/etc/app/app.conf"}},
		"token":     {"vols", []string{"cat", tokenPath}},
		"ca":        {"vols", []string{"cat", filepath.Join(filepath.Dir(tokenPath), "ca.crt")}},
		"envToken":  {"env", []string{"cat", tokenPath}},
		"env":       {"env", []string{"sh", "-c", `echo "$PW $(tr '\0' '\n' </proc/1/environ | sed -n 's/^APP_app.conf=//p')"`}},
	} {
		v, err := h.execByID(ids[c.pod], c.cmd...)
		if err != nil {
			return nil, err
		}
		out[what] = v
	}
	return out, nil
}

func TestCheckpointRebootWithTheAPIServerDownRewritesTheVolumesAndEnv(t *testing.T) {
	c := loadCluster(t)
	h := newAgentHarness(t)
	// The object checkpoint is an opt-in: it puts Secrets and tokens on disk.
	h.configure = func(cfg *nodekit.Config) { cfg.PodCheckpointObjects = true }
	ns := h.joinCluster(c)
	ctx := context.Background()
	if _, err := c.admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"},
		Data: map[string][]byte{"password": []byte("s3cret")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Data: map[string]string{"app.conf": "v1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.start()
	uids := map[string]string{}
	for _, p := range offlinePods(h, ns) {
		got, err := c.admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[p.Name] = string(got.UID)
	}
	for name := range uids {
		waitAPIPod(t, c, ns, name, settle, "Running", apiRunning)
	}
	copies := filepath.Join(h.rootDir, "pod-checkpoint-objects")
	// vols: the secret, the configMap, kube-root-ca.crt, the token; env:
	// the secret, the configMap, and its own token and CA.
	within(t, settle, "the offline copies of both pods saved", func() bool {
		a, _ := filepath.Glob(filepath.Join(copies, uids["vols"], "*.json"))
		b, _ := filepath.Glob(filepath.Join(copies, uids["env"], "*.json"))
		return len(a) == 4 && len(b) == 4
	})
	if info, err := os.Stat(copies); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v (err %v), want a 0700 directory", copies, info, err)
	}
	before, err := h.offlineContents(h.runningByPod())
	if err != nil {
		t.Fatal(err)
	}
	if before["secret"] != "s3cret" || before["configMap"] != "v1" || before["env"] != "s3cret v1" || len(before["token"]) < 100 {
		t.Fatalf("contents before the reboot = %v", before)
	}

	// Reboot with the control plane away: no sandbox, no volume.
	h.stop()
	if n := h.removeAllSandboxes(); n < 2 {
		t.Fatalf("removed %d sandboxes, want at least 2", n)
	}
	if n := h.removeAllVolumes(); n < 2 {
		t.Fatalf("removed %d volume directories, want at least 2", n)
	}
	controlPlane(t, c.down)
	apiUp := false
	defer func() {
		if !apiUp {
			controlPlane(t, c.up)
		}
	}()
	h.start()
	var offline map[string]string
	took := within(t, offlineRunDeadline, "both pods running again with the API server down", func() bool {
		offline = h.runningByPod()
		return len(offline) == 2
	})
	t.Logf("API server down, volumes gone: both pods running %s after the agent started", took.Round(100*time.Millisecond))
	during, err := h.offlineContents(offline)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range before {
		if during[k] != v {
			t.Errorf("%s offline = %.40q, want %.40q as before the reboot", k, during[k], v)
		}
	}
	logs := h.logs.String()
	for _, want := range []string{"setting up the volume from its offline copy", "the container environment uses the offline copy"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the agent did not log %q", want)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	controlPlane(t, c.up)
	apiUp = true
	back := time.Now()
	c = loadCluster(t)
	for name, id := range offline {
		waitAPIPod(t, c, ns, name, statusDeadline, "Running with the container started offline", func(p *corev1.Pod, err error) bool {
			return apiRunning(p, err) && strings.HasSuffix(p.Status.ContainerStatuses[0].ContainerID, id)
		})
	}
	// Refreshed from the API server: a new token, and an edit reaches the
	// files, with no restart.
	tookToken := within(t, 4*time.Minute, "a new token after the API server answered", func() bool {
		v, err := h.execByID(offline["vols"], "cat", tokenPath)
		return err == nil && v != before["token"] && len(v) > 100
	})
	t.Logf("API server back: new token in the volume %s after it answered", tookToken.Round(100*time.Millisecond))
	cm, err := c.admin.CoreV1().ConfigMaps(ns).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["app.conf"] = "v2"
	if _, err := c.admin.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	within(t, 4*time.Minute, "the configMap edit in the volume", func() bool {
		v, err := h.execByID(offline["vols"], "cat", "/etc/app/app.conf")
		return err == nil && v == "v2"
	})
	t.Logf("API server back: configMap edit in the volume %s after the edit", time.Since(edited).Round(100*time.Millisecond))
	t.Logf("API server back: contents refreshed %s after it answered", time.Since(back).Round(100*time.Millisecond))
	if now := h.runningByPod(); now["vols"] != offline["vols"] || now["env"] != offline["env"] {
		t.Fatalf("containers changed after the reconnect: %v -> %v", offline, now)
	}
}
