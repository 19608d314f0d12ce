package status

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// terminatedPod is a pod with init, regular and ephemeral containers and
// a status whose every container terminated with message msgs[i] (and
// its last termination with the same message reversed).
func terminatedPod(init, regular, ephemeral int, msgs []string) (*corev1.Pod, *corev1.PodStatus) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"}}
	st := &corev1.PodStatus{Phase: corev1.PodFailed}
	i := 0
	add := func(list *[]corev1.ContainerStatus, name string) {
		msg := msgs[i%len(msgs)]
		i++
		rev := []byte(msg)
		for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
			rev[l], rev[r] = rev[r], rev[l]
		}
		*list = append(*list, corev1.ContainerStatus{Name: name,
			State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: msg}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Message: string(rev)}}})
	}
	for n := range init {
		name := "init-" + strconv.Itoa(n)
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: name})
		add(&st.InitContainerStatuses, name)
	}
	for n := range regular {
		name := "c-" + strconv.Itoa(n)
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: name})
		add(&st.ContainerStatuses, name)
	}
	for n := range ephemeral {
		name := "debug-" + strconv.Itoa(n)
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name}})
		add(&st.EphemeralContainerStatuses, name)
	}
	return pod, st
}

// checkMessageBudget fails unless every terminated message in got is the
// start of the one set, at most its share of the pod's 12 KiB, and the
// messages of each kind of state add up to at most 12 KiB.
func checkMessageBudget(t *testing.T, pod *corev1.Pod, set, got *corev1.PodStatus) {
	t.Helper()
	n := len(pod.Spec.InitContainers) + len(pod.Spec.Containers) + len(pod.Spec.EphemeralContainers)
	share := maxPodTerminationMessageLength / max(n, 1)
	sent := map[string]string{}
	for _, list := range [][]corev1.ContainerStatus{set.InitContainerStatuses, set.ContainerStatuses, set.EphemeralContainerStatuses} {
		for _, cs := range list {
			sent[cs.Name+"/state"] = cs.State.Terminated.Message
			sent[cs.Name+"/last"] = cs.LastTerminationState.Terminated.Message
		}
	}
	total := map[string]int{}
	for _, list := range [][]corev1.ContainerStatus{got.InitContainerStatuses, got.ContainerStatuses, got.EphemeralContainerStatuses} {
		for _, cs := range list {
			for kind, st := range map[string]corev1.ContainerState{"state": cs.State, "last": cs.LastTerminationState} {
				msg, want := st.Terminated.Message, sent[cs.Name+"/"+kind]
				if len(msg) > share || !strings.HasPrefix(want, msg) || (len(want) <= share && msg != want) {
					t.Fatalf("%s message of %s: %d bytes of the %d set, want the first %d at most (%d containers)", kind, cs.Name, len(msg), len(want), share, n)
				}
				total[kind] += len(msg)
			}
		}
	}
	for kind, sum := range total {
		if sum > maxPodTerminationMessageLength {
			t.Fatalf("%s messages add up to %d bytes, over the pod's %d", kind, sum, maxPodTerminationMessageLength)
		}
	}
}

// Termination messages share the kubelet's 12 KiB per pod: three
// containers that each left the 4096 bytes a container may get keep 4096
// each; five keep 2457 each.
func TestTerminationMessagesShareThePodsBudget(t *testing.T) {
	full := strings.Repeat("m", 4096)
	for _, regular := range []int{1, 3, 5} {
		m := New(nil, newResolver(), &fakeDeletion{}, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
		pod, st := terminatedPod(0, regular, 0, []string{full})
		m.SetPodStatus(pod, st)
		got, _ := m.GetPodStatus(pod.UID)
		checkMessageBudget(t, pod, st, got)
	}
}

// FuzzTerminationMessageBudget sets statuses of pods with up to 15
// containers (init, regular, ephemeral), each terminated with a message of
// up to 16 KiB, through SetPodStatus. No panic; every message kept is the
// start of the one set, at most its container's share of the pod's 12 KiB,
// and untouched when within it; the messages of a pod add up to 12 KiB
// at most, for the current and for the last termination each.
func FuzzTerminationMessageBudget(f *testing.F) {
	f.Add(byte(0), byte(3), byte(0), []byte("exit status 1: connection refused"), uint16(4096))
	f.Add(byte(1), byte(1), byte(1), []byte("panic: runtime error\n"), uint16(700))
	f.Add(byte(7), byte(7), byte(1), []byte("x"), uint16(16384))
	f.Add(byte(0), byte(0), byte(0), []byte("alone"), uint16(13000))
	f.Add(byte(0), byte(2), byte(0), []byte("é"), uint16(3500))
	f.Fuzz(func(t *testing.T, init, regular, ephemeral byte, chunk []byte, length uint16) {
		if len(chunk) == 0 {
			chunk = []byte("m")
		}
		var msgs []string
		for i := range 4 {
			n := int(length>>uint(i)) % (16*1024 + 1)
			msgs = append(msgs, string(bytes.Repeat(chunk, n/len(chunk)+1)[:n]))
		}
		pod, st := terminatedPod(int(init%8), int(regular%8), int(ephemeral%8), msgs)
		m := New(nil, newResolver(), &fakeDeletion{}, clocktesting.NewFakeClock(epoch), logr.Discard(), Config{})
		m.SetPodStatus(pod, st)
		got, ok := m.GetPodStatus(pod.UID)
		if !ok {
			t.Fatal("no status cached")
		}
		checkMessageBudget(t, pod, st, got)
	})
}
