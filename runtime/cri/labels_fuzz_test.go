package cri

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakeapi "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// FuzzLabelsRoundTrip encodes a pod and a container into the labels and
// annotations the manager puts on a sandbox and a container, and decodes
// them as GetPods, GetPodStatus, the evented PLEG and an orphan's KillPod do
// after an agent restart: the identity, spec hash, restart count, grace
// periods and ports must come back as they went in, and decoding arbitrary
// annotations must not panic.
func FuzzLabelsRoundTrip(f *testing.F) {
	f.Add("web", "default", "0f1e2d3c", "main", 3, int64(30), int64(-1), []byte("app=web"), "12ab", "7", "30")
	f.Add("", "", "", "", 0, int64(0), int64(0), []byte{}, "", "", "")
	f.Add("p", "kube-system", "uid", "c", 1<<30, int64(-5), int64(1<<40), []byte("io.kubernetes.pod.uid=evil"), "zz", "-3", "1e3")
	newManager := func(instance string) *Manager {
		root := f.TempDir()
		return NewManager(fakeapi.NewFakeRuntimeService(), fakeapi.NewFakeImageService(),
			clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), logr.Discard(),
			Config{InstanceID: instance, RootDir: root, PodLogsDir: filepath.Join(root, "logs"), ContainerLogsDir: filepath.Join(root, "containers")})
	}
	m, other := newManager(testInstance), newManager(testInstance+"-other")
	f.Fuzz(func(t *testing.T, name, namespace, uid, container string, restarts int, grace, deletionGrace int64,
		extra []byte, rawHash, rawRestarts, rawSeconds string) {
		// Arbitrary annotations decode without panicking, and a restart
		// count is never negative.
		arbitrary := map[string]string{
			noderuntime.AnnotationContainerHash:          rawHash,
			noderuntime.AnnotationContainerRestartCount:  rawRestarts,
			noderuntime.AnnotationTerminationGracePeriod: rawSeconds,
		}
		_ = parseHash(arbitrary)
		if n := parseRestartCount(arbitrary); n < 0 {
			t.Errorf("parseRestartCount(%q) = %d, want >= 0", rawRestarts, n)
		}
		if n, ok := parseSeconds(arbitrary, noderuntime.AnnotationTerminationGracePeriod); ok && strconv.FormatInt(n, 10) != rawSeconds {
			if v, err := strconv.ParseInt(rawSeconds, 10, 64); err != nil || v != n {
				t.Errorf("parseSeconds(%q) = %d, want the number written", rawSeconds, n)
			}
		}

		pod, c := fuzzLabelledPod(name, namespace, uid, container, grace, deletionGrace, extra)
		restarts = max(restarts, 0)
		checkContainerRoundTrip(t, m, pod, c, restarts)
		checkSandboxRoundTrip(t, m, other, pod)
	})
}

// fuzzLabelledPod builds a pod with one container from the fuzzer's values;
// extra gives pod labels (which may try to override the identity labels) and
// container ports.
func fuzzLabelledPod(name, namespace, uid, container string, grace, deletionGrace int64, extra []byte) (*corev1.Pod, *corev1.Container) {
	pod := newPod(uid, container)
	pod.Name, pod.Namespace, pod.UID = name, namespace, types.UID(uid)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	if deletionGrace >= 0 {
		pod.DeletionGracePeriodSeconds = &deletionGrace
	}
	b := &fuzzBytes{data: extra}
	keys := []string{noderuntime.LabelPodUID, noderuntime.LabelPodName, noderuntime.LabelPodNamespace,
		noderuntime.LabelInstance, noderuntime.LabelContainerName, "app"}
	for range b.intn(4) {
		pod.Labels[pick(b, keys...)] = b.string(8)
	}
	c := &pod.Spec.Containers[0]
	for range b.intn(3) {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: b.string(6), ContainerPort: int32(b.int64()),
			HostPort: int32(b.byte()), Protocol: pick(b, corev1.ProtocolTCP, corev1.ProtocolUDP, "")})
	}
	return pod, c
}

func checkContainerRoundTrip(t *testing.T, m *Manager, pod *corev1.Pod, c *corev1.Container, restarts int) {
	t.Helper()
	annotations, err := containerAnnotations(pod, c, restarts)
	if err != nil {
		t.Fatalf("containerAnnotations: %v", err)
	}
	labels := m.containerLabels(pod, c)
	st := &runtimeapi.ContainerStatus{Id: "cid", Metadata: &runtimeapi.ContainerMetadata{Name: c.Name},
		State: runtimeapi.ContainerState_CONTAINER_RUNNING, Labels: labels, Annotations: annotations}
	listed := &runtimeapi.Container{Id: "cid", PodSandboxId: "sid", Metadata: st.Metadata, State: st.State,
		Labels: labels, Annotations: annotations}
	got := m.toContainerStatus(listed, st)
	if got.Name != c.Name || got.Hash != hashContainer(c) || got.RestartCount != restarts || got.SandboxID != "sid" {
		t.Errorf("container status = name %q hash %x restarts %d sandbox %q, want %q %x %d %q",
			got.Name, got.Hash, got.RestartCount, got.SandboxID, c.Name, hashContainer(c), restarts, "sid")
	}
	st.Metadata = nil // a runtime that drops the metadata: the name label stands in
	if got := m.toContainerStatus(listed, st); got.Name != c.Name {
		t.Errorf("container name from labels = %q, want %q", got.Name, c.Name)
	}
	if l := listedToContainer(listed, m.Type()); l.Hash != hashContainer(c) || l.Name != c.Name {
		t.Errorf("listed container = %q %x, want %q %x", l.Name, l.Hash, c.Name, hashContainer(c))
	}
	if podUIDOf(labels) != pod.UID || labels[noderuntime.LabelPodName] != pod.Name ||
		labels[noderuntime.LabelPodNamespace] != pod.Namespace || labels[noderuntime.LabelInstance] != testInstance {
		t.Errorf("container labels %v do not identify pod %s/%s (%s) of instance %s", labels, pod.Namespace, pod.Name, pod.UID, testInstance)
	}
	wantGrace := *pod.Spec.TerminationGracePeriodSeconds
	if pod.DeletionGracePeriodSeconds != nil {
		wantGrace = *pod.DeletionGracePeriodSeconds
	}
	gotGrace, ok := parseSeconds(annotations, noderuntime.AnnotationPodDeletionGracePeriod)
	if !ok {
		gotGrace, ok = parseSeconds(annotations, noderuntime.AnnotationTerminationGracePeriod)
	}
	if !ok || gotGrace != wantGrace {
		t.Errorf("grace period from annotations = %d (found %t), want %d", gotGrace, ok, wantGrace)
	}
	if len(c.Ports) > 0 {
		var ports []corev1.ContainerPort
		if err := json.Unmarshal([]byte(annotations[noderuntime.AnnotationContainerPorts]), &ports); err != nil {
			t.Fatalf("ports annotation %q: %v", annotations[noderuntime.AnnotationContainerPorts], err)
		}
		if !reflect.DeepEqual(ports, normalizedPorts(c.Ports)) {
			t.Errorf("ports from annotation = %+v, want %+v", ports, c.Ports)
		}
	}
}

// normalizedPorts is what a JSON round trip gives for ports: strings with
// invalid UTF-8 come back with U+FFFD.
func normalizedPorts(in []corev1.ContainerPort) []corev1.ContainerPort {
	b, _ := json.Marshal(in)
	var out []corev1.ContainerPort
	_ = json.Unmarshal(b, &out)
	return out
}

func checkSandboxRoundTrip(t *testing.T, m, other *Manager, pod *corev1.Pod) {
	t.Helper()
	labels := m.sandboxLabels(pod)
	sbStatus := &runtimeapi.PodSandboxStatus{Id: "sid", State: runtimeapi.PodSandboxState_SANDBOX_READY,
		Labels: labels, Annotations: sandboxAnnotations(pod)}
	status, ok := m.PodStatusFromEvent(&runtimeapi.ContainerEventResponse{PodSandboxStatus: sbStatus})
	if pod.UID == "" {
		if ok {
			t.Errorf("an event for a sandbox without a pod UID gave status %+v", status)
		}
		return
	}
	if !ok || status.ID != pod.UID || status.Name != pod.Name || status.Namespace != pod.Namespace {
		t.Errorf("status from sandbox labels %v = %+v (ok %t), want pod %s/%s (%s)", labels, status, ok, pod.Namespace, pod.Name, pod.UID)
	}
	for k, v := range pod.Labels {
		if _, identity := map[string]bool{noderuntime.LabelPodUID: true, noderuntime.LabelPodName: true,
			noderuntime.LabelPodNamespace: true, noderuntime.LabelInstance: true}[k]; !identity && labels[k] != v {
			t.Errorf("sandbox label %q = %q, want the pod's %q", k, labels[k], v)
		}
	}
	if _, ok := other.PodStatusFromEvent(&runtimeapi.ContainerEventResponse{PodSandboxStatus: sbStatus}); ok {
		t.Errorf("another instance adopted sandbox labelled %v", labels)
	}
}
