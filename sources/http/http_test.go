package http

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	nethttp "net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/sources"
	"github.com/nodekit/nodekit/sources/file"
)

func TestNameIsHTTP(t *testing.T) {
	if got := New(clocktesting.NewFakeClock(epoch), logr.Discard(), Config{}).Name(); got != sources.HTTPSource {
		t.Fatalf("Name() = %q, want %q", got, sources.HTTPSource)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "a URL is required", cfg: Config{NodeName: node}, want: "url is required"},
		{name: "a URL must be http or https", cfg: Config{URL: "file:///etc/pods.yaml", NodeName: node}, want: "http or https"},
		{name: "a URL needs a host", cfg: Config{URL: "http:///pods", NodeName: node}, want: "with a host"},
		{name: "a node name is required", cfg: Config{URL: "http://h/pods"}, want: "nodeName is required"},
		{name: "a negative period is refused", cfg: Config{URL: "http://h/pods", NodeName: node, CheckPeriod: -time.Second}, want: "checkPeriod"},
		{name: "a negative timeout is refused", cfg: Config{URL: "http://h/pods", NodeName: node, Timeout: -time.Second}, want: "timeout"},
		{name: "a complete config is valid", cfg: Config{URL: "https://h/pods", NodeName: node}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestAPodIsNamedAndHashedAsTheKubeletDoes(t *testing.T) {
	srv := newServer(t, podYAML("web", "nginx:1.27"))
	h := start(t, srv, nil)
	h.hit()
	pods := h.next()
	if len(pods) != 1 {
		t.Fatalf("snapshot = %v, want one pod", names(pods))
	}
	p := pods[0]
	if p.Name != "web-node1" || p.Namespace != "default" || p.Spec.NodeName != node {
		t.Fatalf("pod %s/%s on %q, want default/web-node1 on %s", p.Namespace, p.Name, p.Spec.NodeName, node)
	}
	decoded, _, err := file.DecodePod([]byte(podYAML("web", "nginx:1.27")))
	if err != nil {
		t.Fatal(err)
	}
	content, _ := json.Marshal(decoded)
	sum := md5.Sum(append([]byte("url:"+srv.URL+"/pods"), content...))
	if want := hex.EncodeToString(sum[:]); string(p.UID) != want || p.Annotations[sources.AnnotationHash] != want {
		t.Fatalf("UID %s hash %s, want md5(url:<url> + pod) = %s", p.UID, p.Annotations[sources.AnnotationHash], want)
	}
	// The file source's defaults are applied: the same code path.
	if p.Spec.RestartPolicy != corev1.RestartPolicyAlways || p.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Fatalf("defaults not applied: restartPolicy %q pullPolicy %q", p.Spec.RestartPolicy, p.Spec.Containers[0].ImagePullPolicy)
	}
}

func TestAPodListGivesEveryPod(t *testing.T) {
	srv := newServer(t, podListJSON("a", "b"))
	h := start(t, srv, nil)
	h.hit()
	if got := names(h.next()); !reflect.DeepEqual(got, []string{"a-node1", "b-node1"}) {
		t.Fatalf("snapshot = %v, want [a-node1 b-node1]", got)
	}
}

func TestAddEditRemove(t *testing.T) {
	srv := newServer(t, podListJSON())
	h := start(t, srv, nil)
	h.hit()
	if got := h.next(); len(got) != 0 {
		t.Fatalf("first snapshot = %v, want an empty one", names(got))
	}
	srv.serve(nethttp.StatusOK, podYAML("web", "nginx:1.26"))
	h.tick()
	added := h.next()
	if got := names(added); !reflect.DeepEqual(got, []string{"web-node1"}) {
		t.Fatalf("after the add = %v, want [web-node1]", got)
	}
	h.nothingSent("the same body again")
	srv.serve(nethttp.StatusOK, podYAML("web", "nginx:1.27"))
	h.tick()
	edited := h.next()
	if len(edited) != 1 || edited[0].UID == added[0].UID || edited[0].Spec.Containers[0].Image != "nginx:1.27" {
		t.Fatalf("after the edit = %v, want web-node1 with a new UID and the new image", names(edited))
	}
	srv.serve(nethttp.StatusOK, podListJSON())
	h.tick()
	if got := h.next(); len(got) != 0 {
		t.Fatalf("after the remove = %v, want no pods", names(got))
	}
}

func TestHeadersAreSent(t *testing.T) {
	srv := newServer(t, podListJSON())
	h := start(t, srv, func(c *Config) {
		c.Header = nethttp.Header{"Authorization": {"Bearer t0ken"}, "X-Multi": {"one", "two"}}
	})
	h.hit()
	h.next()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if got := srv.headers.Get("Authorization"); got != "Bearer t0ken" {
		t.Fatalf("Authorization = %q", got)
	}
	if got := srv.headers.Values("X-Multi"); !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Fatalf("X-Multi = %v, want [one two]", got)
	}
}

func TestFailuresKeepTheLastPodsAndLogOncePerStreak(t *testing.T) {
	const failed = "Failed to read pods from the manifest URL"
	const again = "Read pods from the manifest URL again"
	srv := newServer(t, podYAML("web", "nginx"))
	h := start(t, srv, nil)
	h.hit()
	h.next()
	for _, bad := range []struct {
		status int
		body   string
	}{
		{nethttp.StatusInternalServerError, "oops"},
		{nethttp.StatusOK, "kind: Deployment\nmetadata:\n  name: x\n"},
		{nethttp.StatusOK, "{not json"},
		{nethttp.StatusOK, podListJSON("ok", "Invalid_Name")},
	} {
		srv.serve(bad.status, bad.body)
		h.nothingSent("a failed read " + bad.body)
	}
	if n := h.logs.count(failed); n != 1 {
		t.Fatalf("%d failure lines for one streak of failures, want 1", n)
	}
	// Back with the same manifest: nothing to send, the recovery is logged.
	srv.serve(nethttp.StatusOK, podYAML("web", "nginx"))
	h.nothingSent("the last good manifest again")
	h.nothingSent("the last good manifest again") // the read before has finished
	if n := h.logs.count(again); n != 1 {
		t.Fatalf("%d recovery lines, want 1", n)
	}
	srv.serve(nethttp.StatusBadGateway, "")
	h.nothingSent("a second streak")
	h.nothingSent("a second streak")
	if n := h.logs.count(failed); n != 2 {
		t.Fatalf("%d failure lines after two streaks, want 2", n)
	}
}

func TestAnUnreachableURLSendsNothingUntilItAnswers(t *testing.T) {
	srv := newServer(t, podYAML("web", "nginx"))
	url := srv.URL
	srv.Close() // nothing listens there any more
	src := New(clocktesting.NewFakeClock(epoch), logr.Discard(), Config{URL: url + "/pods", NodeName: node})
	r := &reader{src: src, cfg: src.cfg.withDefaults(), client: &nethttp.Client{Timeout: time.Second}, updates: make(chan []*corev1.Pod)}
	if !r.poll(t.Context()) {
		t.Fatal("poll reported a cancelled context")
	}
	if r.sent || r.failures != 1 {
		t.Fatalf("sent %v failures %d after an unreachable read, want nothing sent and one failure", r.sent, r.failures)
	}
}

func TestAnEmptyBodyMeansNoPods(t *testing.T) {
	srv := newServer(t, podYAML("web", "nginx"))
	h := start(t, srv, nil)
	h.hit()
	h.next()
	srv.serve(nethttp.StatusOK, "")
	h.tick()
	if got := h.next(); len(got) != 0 {
		t.Fatalf("after an empty body = %v, want no pods", names(got))
	}
}
