package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/agent/admission/admissiontest"
	"github.com/nodekit/nodekit/internal/simharness"
	"github.com/nodekit/nodekit/sources"
)

const key = "example.nodekit.io/deny"

type events struct {
	mu   sync.Mutex
	seen []string
}

func (e *events) Eventf(obj apiruntime.Object, typ, reason, format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = append(e.seen, fmt.Sprintf("%s %s %s: %s", obj.(*corev1.Pod).Name, typ, reason, fmt.Sprintf(format, args...)))
}

func pod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Labels: labels,
			Annotations: map[string]string{sources.AnnotationSource: sources.FileSource}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1"}}},
	}
}

// On the simulated runtime: the labelled pod ends Failed with the
// handler's reason and a Warning event, and never gets a sandbox; the
// others run.
func TestALabelledPodIsRefusedAndTheOthersRun(t *testing.T) {
	rec := &events{}
	h := simharness.New(t, simharness.Options{
		Admission: append(agent.DefaultAdmission(nil, agent.Config{}, logr.Discard()), RefuseLabelled{Key: key}),
		Events:    rec,
	})
	h.Start()
	h.Add(pod("a", nil), pod("denied", map[string]string{key: "yes"}), pod("b", map[string]string{"other": "x"}))
	h.StepUntil("a and b running", 30*time.Second, func() bool {
		a, b := h.Pod("uid-a"), h.Pod("uid-b")
		return a != nil && b != nil && a.Status.Phase == corev1.PodRunning && b.Status.Phase == corev1.PodRunning
	})
	denied := h.Pod("uid-denied")
	want := "Pod was rejected: pods labelled " + key + " do not run on this node (2 other pods here)" // a and b, admitted first (same age: by name)
	if denied.Status.Phase != corev1.PodFailed || denied.Status.Reason != ReasonLabelRefused || denied.Status.Message != want {
		t.Fatalf("refused pod: phase %s reason %q message %q; want Failed %s %q",
			denied.Status.Phase, denied.Status.Reason, denied.Status.Message, ReasonLabelRefused, want)
	}
	rec.mu.Lock()
	got := strings.Join(rec.seen, "\n")
	rec.mu.Unlock()
	if wantEv := "denied Warning LabelRefused: " + strings.TrimPrefix(want, "Pod was rejected: "); got != wantEv {
		t.Fatalf("events:\n%s\nwant:\n%s", got, wantEv)
	}
	sandboxes, err := h.Sim.ListPodSandbox(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sandboxes {
		if s.Metadata.Uid == "uid-denied" {
			t.Fatalf("the refused pod got a sandbox: %v", s)
		}
	}
}

// Through fx: Module puts the handler at the end of the default chain.
func TestModuleAppendsTheHandlerToTheDefaultChain(t *testing.T) {
	cfg := nodekit.DefaultConfig()
	cfg.NodeName, cfg.Runtime, cfg.RootDir, cfg.Server.Port = "n", nodekit.RuntimeSim, t.TempDir(), 0
	var chain admission.Chain
	app := nodekit.New(cfg, logr.Discard(), nodekit.Defaults(), Module(key), fx.Populate(&chain))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	if len(chain) < 2 {
		t.Fatalf("chain = %#v, want the defaults and RefuseLabelled", chain)
	}
	if h, ok := chain[len(chain)-1].(RefuseLabelled); !ok || h.Key != key {
		t.Fatalf("last handler = %#v, want RefuseLabelled{%s}", chain[len(chain)-1], key)
	}
	if r := chain.Admit(&admission.Attributes{Pod: pod("x", map[string]string{key: ""})}); r.Reason != ReasonLabelRefused {
		t.Fatalf("the chain let a labelled pod in: %+v", r)
	}
}

// The handler keeps the admission contract (agent/admission/admissiontest).
func TestRefuseLabelledPassesTheAdmissionSuite(t *testing.T) {
	admissiontest.Suite(t, RefuseLabelled{Key: key}, []admissiontest.Case{
		{Name: "an unlabelled pod runs", Pod: pod("a", map[string]string{"app": "a"}), Admit: true},
		{Name: "a labelled pod is refused", Pod: pod("d", map[string]string{key: ""}), OtherPods: []*corev1.Pod{pod("a", nil)}, Reason: ReasonLabelRefused},
	})
}
