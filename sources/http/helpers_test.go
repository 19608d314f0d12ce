package http

import (
	"context"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// waitLimit bounds every wait for another goroutine; tests never sleep.
const waitLimit = 10 * time.Second

const node = "Node1"

func podYAML(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: main\n    image: %s\n", name, image)
}

func podListJSON(pods ...string) string {
	items := make([]string, len(pods))
	for i, p := range pods {
		items[i] = fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"containers":[{"name":"main","image":"busybox"}]}}`, p)
	}
	return `{"apiVersion":"v1","kind":"PodList","items":[` + strings.Join(items, ",") + `]}`
}

// manifestServer serves whatever the test sets and reports every request.
type manifestServer struct {
	*httptest.Server
	mu      sync.Mutex
	status  int
	body    string
	headers nethttp.Header
	hits    chan struct{}
}

func newServer(t *testing.T, body string) *manifestServer {
	s := &manifestServer{status: nethttp.StatusOK, body: body, hits: make(chan struct{}, 100)}
	s.Server = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		s.mu.Lock()
		status, body := s.status, s.body
		s.headers = r.Header.Clone()
		s.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
		s.hits <- struct{}{}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *manifestServer) serve(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

// harness runs a Source against a server and collects what it sends.
type harness struct {
	t       *testing.T
	srv     *manifestServer
	clk     *clocktesting.FakeClock
	updates chan []*corev1.Pod
	logs    *logLines
	cancel  context.CancelFunc
	done    chan error
}

// logLines collects V(0) log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *logLines) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func start(t *testing.T, srv *manifestServer, mutate func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, srv: srv, clk: clocktesting.NewFakeClock(epoch), updates: make(chan []*corev1.Pod),
		logs: &logLines{}, done: make(chan error, 1)}
	cfg := Config{URL: srv.URL + "/pods", NodeName: node}
	if mutate != nil {
		mutate(&cfg)
	}
	src := New(h.clk, funcr.New(h.logs.add, funcr.Options{}), cfg)
	src.client = srv.Client()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- src.Run(ctx, h.updates) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-h.done:
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		case <-time.After(waitLimit):
			t.Error("Run did not return after its context ended")
		}
	})
	return h
}

// hit waits for the server's next request.
func (h *harness) hit() {
	h.t.Helper()
	select {
	case <-h.srv.hits:
	case <-time.After(waitLimit):
		h.t.Fatal("the source did not read the URL")
	}
}

// next returns the next snapshot.
func (h *harness) next() []*corev1.Pod {
	h.t.Helper()
	select {
	case pods := <-h.updates:
		return pods
	case <-time.After(waitLimit):
		h.t.Fatal("no snapshot sent")
		return nil
	}
}

// tick fires the check period and waits for the read it starts.
func (h *harness) tick() {
	h.t.Helper()
	h.clk.Step(DefaultCheckPeriod)
	h.hit()
}

// nothingSent shows that the read just made sent nothing: the source made
// its next read without blocking on a send first.
func (h *harness) nothingSent(what string) {
	h.t.Helper()
	h.clk.Step(DefaultCheckPeriod)
	select {
	case pods := <-h.updates:
		h.t.Fatalf("%s: snapshot %v sent, want none", what, names(pods))
	case <-h.srv.hits:
	case <-time.After(waitLimit):
		h.t.Fatal("the source did not read the URL again")
	}
}

func names(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}
