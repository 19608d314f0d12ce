//go:build e2e

package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit"
)

// manifestURL serves what the test sets, checking the header the agent
// must send.
type manifestURL struct {
	mu     sync.Mutex
	status int
	body   string
	reads  int
	badHdr int
}

func (m *manifestURL) set(status int, body string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status, m.body = status, body
}

func (m *manifestURL) readCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads
}

func (m *manifestURL) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	if r.Header.Get("Authorization") != "Bearer e2e" {
		m.badHdr++
	}
	w.WriteHeader(m.status)
	_, _ = w.Write([]byte(m.body))
}

func TestHTTPSourceAddEditRemoveUnreachable(t *testing.T) {
	h := newAgentHarness(t)
	src := &manifestURL{status: http.StatusOK, body: `{"kind":"PodList","apiVersion":"v1","items":[]}`}
	srv := httptest.NewServer(src)
	defer srv.Close()
	h.configure = func(cfg *nodekit.Config) {
		cfg.HTTPSource.URL = srv.URL + "/pods"
		cfg.HTTPSource.Header = http.Header{"Authorization": {"Bearer e2e"}}
		cfg.HTTPSource.CheckPeriod = time.Second
	}
	h.start()

	// Add.
	src.set(http.StatusOK, twoContainerPod(h.env.Image, "web", "a"))
	added := h.waitPod("web", settle, "running from the URL", func(p *corev1.Pod) bool {
		return allReady(p) && p.Annotations["kubernetes.io/config.source"] == "http"
	})

	// Edit: a new UID replaces the pod.
	src.set(http.StatusOK, twoContainerPod(h.env.Image, "web", "b"))
	edited := h.waitPod("web", settle, "replaced by a running pod with a new UID", func(p *corev1.Pod) bool {
		return p.UID != added.UID && allReady(p)
	})
	within(t, settle, "the old pod's containers gone", func() bool {
		for _, c := range h.runningContainers() {
			if c.Labels["io.kubernetes.pod.uid"] == string(added.UID) {
				return false
			}
		}
		return true
	})

	// Unreachable: the last good pod keeps running; one log line.
	src.set(http.StatusServiceUnavailable, "down")
	reads := src.readCount()
	within(t, settle, "five failed reads", func() bool { return src.readCount() >= reads+5 })
	pods, err := h.pods()
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, p := range pods {
		kept = kept || (p.UID == edited.UID && allReady(&p))
	}
	if !kept {
		t.Fatalf("the pod from the URL did not keep running while the URL failed: %v", pods)
	}
	if n := strings.Count(h.logs.String(), "Failed to read pods from the manifest URL; the last good pods keep running"); n != 1 {
		t.Fatalf("%d failure lines for one streak, want 1", n)
	}

	// Remove.
	src.set(http.StatusOK, `{"kind":"PodList","apiVersion":"v1","items":[]}`)
	within(t, 40*time.Second, "the removed pod's containers gone", func() bool { return len(h.runningContainers()) == 0 })
	if !strings.Contains(h.logs.String(), "Read pods from the manifest URL again") {
		t.Fatal("the end of the failure streak was not logged")
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.badHdr != 0 {
		t.Fatalf("%d of %d requests lacked the configured header", src.badHdr, src.reads)
	}
}
