package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodekit/nodekit/internal/downward"
)

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

// kubeAPIAccess is the volume the ServiceAccount admission plugin adds.
func kubeAPIAccess() corev1.Volume {
	return corev1.Volume{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr(int32(0o644)),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

func TestKubeAPIAccessVolumeHasTheTokenTheCAAndTheNamespace(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "kube-root-ca.crt", map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----"})
	pod := newPod("u1", kubeAPIAccess())
	e.setUp(t, pod)
	for file, want := range map[string]string{"token": "token-0", "ca.crt": "-----BEGIN CERTIFICATE-----", "namespace": "ns"} {
		if got := e.read(t, pod, "kube-api-access-x", file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
		if m := e.modeOf(t, pod, "kube-api-access-x", file); m != 0o644 {
			t.Errorf("%s mode %v, want 0644", file, m)
		}
	}
	v := e.m.PodVolumes(pod.UID)["kube-api-access-x"]
	if _, ok := e.tmpfsSize(v.HostPath); !ok || !strings.Contains(v.HostPath, "kubernetes.io~projected") || !v.ReadOnly {
		t.Errorf("volume %+v: want a read-only projected volume on a tmpfs", v)
	}
	if len(e.tokens.requests) != 1 {
		t.Fatalf("%d token requests, want 1", len(e.tokens.requests))
	}
	tr := e.tokens.requests[0]
	ref := tr.Spec.BoundObjectRef
	if e.tokens.accounts[0] != "ns/default" || len(tr.Spec.Audiences) != 0 || *tr.Spec.ExpirationSeconds != 3607 ||
		ref == nil || ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != "web-u1" || ref.UID != "u1" {
		t.Errorf("token request for %s: %+v, want the API server's audiences, 3607s, bound to pod web-u1", e.tokens.accounts[0], tr.Spec)
	}
}

func TestARenewedTokenIsWrittenWithoutAnythingElseChanging(t *testing.T) {
	e := newTestEnv(t)
	e.objects.putConfigMap("ns", "kube-root-ca.crt", map[string]string{"ca.crt": "CA"})
	pod := newPod("u1", kubeAPIAccess())
	e.setUp(t, pod)
	dir := e.m.PodVolumes(pod.UID)["kube-api-access-x"].HostPath
	before, _ := os.Readlink(filepath.Join(dir, "..data"))
	e.m.Resync(context.Background())
	if same, _ := os.Readlink(filepath.Join(dir, "..data")); same != before {
		t.Fatal("the same token was written again")
	}
	e.tokens.renew()
	e.m.Resync(context.Background())
	if got := e.read(t, pod, "kube-api-access-x", "token"); got != "token-1" {
		t.Fatalf("token = %q after the token manager renewed it, want token-1", got)
	}
}

func TestTokenProjectionAudienceAndFSGroupMode(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", corev1.Volume{Name: "tok", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "vault", Path: "vault-token"}}},
	}}})
	pod.Spec.ServiceAccountName = "robot"
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(os.Geteuid()))}
	e.setUp(t, pod)
	tr := e.tokens.requests[0]
	if e.tokens.accounts[0] != "ns/robot" || len(tr.Spec.Audiences) != 1 || tr.Spec.Audiences[0] != "vault" || *tr.Spec.ExpirationSeconds != 3600 {
		t.Errorf("request for %s: %+v, want audience vault and the default 3600s", e.tokens.accounts[0], tr.Spec)
	}
	if m := e.modeOf(t, pod, "tok", "vault-token"); m != 0o600 {
		t.Errorf("token mode %v with one runAsUser, want 0600", m)
	}
}

func TestProjectedSourcesThatAreNotSupportedSaySo(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "b"}}},
	}}})
	if err := e.m.SetUpPod(context.Background(), pod); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "clusterTrustBundle projections are not supported by nodekit") {
		t.Fatalf("err = %v", err)
	}
}

func TestWithoutAnAPIServerObjectVolumesFailSayingSo(t *testing.T) {
	e := newTestEnv(t)
	e.m.objects, e.m.tokens = nil, nil
	pod := newPod("u1", kubeAPIAccess())
	if err := e.m.SetUpPod(context.Background(), pod); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "no API server is configured") {
		t.Fatalf("err = %v", err)
	}
}

func downwardVolume(items ...corev1.DownwardAPIVolumeFile) corev1.Volume {
	return corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items}}}
}

func field(path, fieldPath string) corev1.DownwardAPIVolumeFile {
	return corev1.DownwardAPIVolumeFile{Path: path, FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath}}
}

func resourceItem(path, res, divisor string) corev1.DownwardAPIVolumeFile {
	sel := &corev1.ResourceFieldSelector{ContainerName: "main", Resource: res}
	if divisor != "" {
		sel.Divisor = mustQ(divisor)
	}
	return corev1.DownwardAPIVolumeFile{Path: path, ResourceFieldRef: sel}
}

func TestDownwardAPIVolumeFields(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", downwardVolume(
		field("name", "metadata.name"), field("namespace", "metadata.namespace"), field("uid", "metadata.uid"),
		field("labels", "metadata.labels"), field("annotations", "metadata.annotations"),
		field("tier", "metadata.labels['tier']"),
		resourceItem("cpu_limit", "limits.cpu", ""), resourceItem("cpu_request_m", "requests.cpu", "1m"),
		resourceItem("mem_limit_mi", "limits.memory", "1Mi"), resourceItem("mem_request", "requests.memory", ""),
	))
	pod.Labels = map[string]string{"tier": "front", "app": "web"}
	pod.Annotations = map[string]string{"note": `say "hi"`}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: mustQ("250m"), corev1.ResourceMemory: mustQ("1500")},
	}
	e.setUp(t, pod)
	for file, want := range map[string]string{
		"name": "web-u1", "namespace": "ns", "uid": "u1",
		"labels": "app=\"web\"\ntier=\"front\"", "annotations": `note="say \"hi\""`, "tier": "front",
		// No limits: the node's allocatable 4 cpus and 8Gi.
		"cpu_limit": "4", "cpu_request_m": "250", "mem_limit_mi": "8192", "mem_request": "1500",
	} {
		if got := e.read(t, pod, "info", file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if _, ok := e.tmpfsSize(e.m.PodVolumes(pod.UID)["info"].HostPath); !ok {
		t.Error("a downwardAPI volume is not on a tmpfs")
	}
}

func TestDownwardAPIDivisorRoundsUpAndLimitsWin(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", downwardVolume(resourceItem("cpu", "limits.cpu", ""), resourceItem("mem", "limits.memory", "1Mi")))
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: mustQ("1250m"), corev1.ResourceMemory: mustQ("1500Ki")}
	e.setUp(t, pod)
	if got := e.read(t, pod, "info", "cpu"); got != "2" {
		t.Errorf("cpu = %q, want 1.25 rounded up to 2", got)
	}
	if got := e.read(t, pod, "info", "mem"); got != "2" {
		t.Errorf("mem = %q, want 1500Ki in Mi rounded up to 2", got)
	}
}

func TestDownwardAPILabelsFollowThePod(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", downwardVolume(field("labels", "metadata.labels")))
	e.setUp(t, pod)
	relabelled := pod.DeepCopy()
	relabelled.Labels["tier"] = "back"
	e.setUp(t, relabelled)
	if got := e.read(t, pod, "info", "labels"); got != "app=\"web\"\ntier=\"back\"" {
		t.Fatalf("labels = %q after the change", got)
	}
}

func TestDownwardAPIUnsupportedFieldFails(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", downwardVolume(field("ip", "status.podIP")))
	if err := e.m.SetUpPod(context.Background(), pod); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "unsupported fieldPath: status.podIP") {
		t.Fatalf("err = %v", err)
	}
}

// TestDownwardAPIValuesAreWrittenUnchanged: a value with newlines and a
// key that sorts differently from its line are written as the env value
// is formatted, not line-sorted.
func TestDownwardAPIValuesAreWrittenUnchanged(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", downwardVolume(field("labels", "metadata.labels"), field("note", "metadata.annotations['note']")))
	pod.Labels = map[string]string{"a": "1", "a.b": "2"}
	pod.Annotations = map[string]string{"note": "zeta\nalpha"}
	e.setUp(t, pod)
	if got, want := e.read(t, pod, "info", "labels"), downward.FormatMap(pod.Labels); got != want || got != "a=\"1\"\na.b=\"2\"" {
		t.Errorf("labels = %q, want %q (sorted by key)", got, want)
	}
	if got := e.read(t, pod, "info", "note"); got != "zeta\nalpha" {
		t.Errorf("note = %q, want the annotation unchanged", got)
	}
}

func TestAResyncBoundsItsAPICalls(t *testing.T) {
	e := newTestEnv(t)
	e.m.cfg.ResyncTimeout = time.Hour
	pod := newPod("u1", corev1.Volume{Name: "tok", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}},
	}}})
	e.setUp(t, pod)
	e.m.Resync(context.Background())
	if n := len(e.tokens.untilDeadline); n != 2 {
		t.Fatalf("%d token requests, want 2", n)
	}
	if left := e.tokens.untilDeadline[1]; left <= 0 || left > time.Hour {
		t.Fatalf("the resync's token request had %v left, want a deadline within ResyncTimeout (1h)", left)
	}
}
