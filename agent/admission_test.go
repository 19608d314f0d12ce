package agent

import (
	"fmt"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodekit/nodekit/agent/admission"
	"github.com/nodekit/nodekit/podworkers"
	"github.com/nodekit/nodekit/sources"
)

// recordedEvents keeps every event, as "reason: message".
type recordedEvents struct {
	mu     sync.Mutex
	events []string
}

func (r *recordedEvents) Eventf(_ apiruntime.Object, eventType, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+": "+fmt.Sprintf(format, args...))
}

func (r *recordedEvents) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// refuseLabelled refuses pods labelled deny=yes, and records how many
// other pods each pod it saw had beside it.
type refuseLabelled struct{ others map[types.UID]int }

func (h *refuseLabelled) Admit(attrs *admission.Attributes) admission.Result {
	h.others[attrs.Pod.UID] = len(attrs.OtherPods)
	if attrs.Pod.Labels["deny"] == "yes" {
		return admission.Refused("Denied", "pod is labelled deny=yes")
	}
	return admission.Admitted()
}

func TestAChainHandlerRefusesAPodWithItsReasonAndAnEventAndSeesTheOtherPods(t *testing.T) {
	lt := newLoopTest(t, Config{})
	h := &refuseLabelled{others: map[types.UID]int{}}
	rec := &recordedEvents{}
	lt.agent.admit = append(DefaultAdmission(nil, Config{}, testr.New(t)), h)
	lt.agent.events = rec
	lt.start()
	a, b, c := staticPod("a", "a"), staticPod("b", "b"), staticPod("c", "c")
	b.Labels = map[string]string{"deny": "yes"}
	lt.config.updates <- sources.PodUpdate{Op: sources.ADD, Pods: []*corev1.Pod{a, b, c}}
	for _, want := range []types.UID{"a", "c"} {
		if call := lt.nextCall(); call.UpdateType != podworkers.SyncPodCreate || call.Pod.UID != want {
			t.Fatalf("call = %s %v, want create of %s", call.UpdateType, call.Pod.UID, want)
		}
	}
	lt.noCall()
	st, ok := lt.agent.statuses.GetPodStatus("b")
	if !ok || st.Phase != corev1.PodFailed || st.Reason != "Denied" || st.Message != "Pod was rejected: pod is labelled deny=yes" {
		t.Fatalf("refused pod status = %+v", st)
	}
	if got := rec.list(); len(got) != 1 || got[0] != "Warning Denied: pod is labelled deny=yes" {
		t.Fatalf("events = %q, want one Warning Denied event", got)
	}
	// a was admitted first, so b saw one other pod; b was refused, so c
	// saw only a.
	if h.others["a"] != 0 || h.others["b"] != 1 || h.others["c"] != 1 {
		t.Fatalf("other pods seen = %v, want a:0 b:1 c:1", h.others)
	}
}

func TestTheModulesChainIsTheDefaultsThenTheAdmissionGroup(t *testing.T) {
	mine := admission.HandlerFunc(func(*admission.Attributes) admission.Result { return admission.Refused("Mine", "") })
	var chain admission.Chain
	app := fx.New(fx.NopLogger,
		fx.Supply(Config{MaxPods: 3}, logr.Discard()),
		fx.Provide(newAdmissionChain,
			fx.Annotate(func() admission.Handler { return mine }, fx.ResultTags(`group:"admission"`))),
		fx.Populate(&chain))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	if len(chain) != 5 {
		t.Fatalf("chain = %#v, want sysctls, OS, pod count, resources, then the group's handler", chain)
	}
	if _, ok := chain[0].(*SysctlAdmission); !ok {
		t.Errorf("chain[0] = %T, want *SysctlAdmission", chain[0])
	}
	if _, ok := chain[1].(OSAdmission); !ok {
		t.Errorf("chain[1] = %T, want OSAdmission", chain[1])
	}
	if h, ok := chain[2].(PodCountAdmission); !ok || h.MaxPods != 3 {
		t.Errorf("chain[2] = %#v, want PodCountAdmission{3}", chain[2])
	}
	if _, ok := chain[3].(ResourceAdmission); !ok {
		t.Errorf("chain[3] = %T, want ResourceAdmission", chain[3])
	}
	if r := chain[4].Admit(&admission.Attributes{Pod: &corev1.Pod{}}); r.Reason != "Mine" {
		t.Errorf("chain[4] is not the group's handler: %+v", r)
	}
}

func TestAChainStopsAtTheFirstRefusal(t *testing.T) {
	calls := 0
	count := admission.HandlerFunc(func(*admission.Attributes) admission.Result { calls++; return admission.Admitted() })
	refuse := admission.HandlerFunc(func(*admission.Attributes) admission.Result { return admission.Refused("No", "no") })
	if r := (admission.Chain{count, refuse, count}).Admit(&admission.Attributes{}); r.Admit || r.Reason != "No" || calls != 1 {
		t.Fatalf("result %+v after %d calls, want the refusal after one", r, calls)
	}
	if r := (admission.Chain{}).Admit(&admission.Attributes{}); !r.Admit {
		t.Fatalf("an empty chain refused: %+v", r)
	}
}
