package http

import (
	"context"
	"errors"
	"fmt"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// recorder is a test server that redirects the paths in redirects and
// serves a pod elsewhere, recording the headers of every request.
type recorder struct {
	*httptest.Server
	mu        sync.Mutex
	redirects map[string]string
	seen      map[string]nethttp.Header
}

func newRecorder(t *testing.T, tls bool) *recorder {
	r := &recorder{redirects: map[string]string{}, seen: map[string]nethttp.Header{}}
	h := nethttp.HandlerFunc(func(w nethttp.ResponseWriter, req *nethttp.Request) {
		r.mu.Lock()
		r.seen[req.URL.Path] = req.Header.Clone()
		to, ok := r.redirects[req.URL.Path]
		r.mu.Unlock()
		if ok {
			nethttp.Redirect(w, req, to, nethttp.StatusFound)
			return
		}
		_, _ = w.Write([]byte(podYAML("web", "nginx:1")))
	})
	if tls {
		r.Server = httptest.NewTLSServer(h)
	} else {
		r.Server = httptest.NewServer(h)
	}
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) redirect(from, to string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.redirects[from] = to
}

// headers returns the headers of the last request to path, nil if none.
func (r *recorder) headers(path string) nethttp.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[path]
}

// port is the server's port.
func (r *recorder) port() string {
	_, port, _ := net.SplitHostPort(r.Listener.Addr().String())
	return port
}

// loopbackClient dials 127.0.0.1 whatever host a URL names, so that a test
// can redirect to another host name; tlsFrom, if set, lends its trust of
// an httptest TLS server.
func loopbackClient(t *testing.T, tlsFrom *recorder) *nethttp.Client {
	tr := &nethttp.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
	}}
	if tlsFrom != nil {
		tr.TLSClientConfig = tlsFrom.Client().Transport.(*nethttp.Transport).TLSClientConfig.Clone()
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &nethttp.Client{Transport: tr}
}

// fetchVia reads url as a Run with header does, through client.
func fetchVia(t *testing.T, client *nethttp.Client, url string, header nethttp.Header) error {
	src := New(clocktesting.NewFakeClock(epoch), logr.Discard(), Config{URL: url, NodeName: node, Header: header})
	src.client = client
	cfg := src.cfg.withDefaults()
	r := &reader{src: src, cfg: cfg, client: src.newClient(cfg)}
	_, err := r.fetch(t.Context())
	return err
}

func TestConfiguredHeadersDoNotFollowARedirectToAnotherOrigin(t *testing.T) {
	header := nethttp.Header{"Authorization": {"Bearer t0ken"}, "X-Api-Key": {"k3y"}}
	for _, c := range []struct {
		name     string
		chain    func(origin, other *recorder) (first, last string)
		wantKept bool
	}{
		{"a redirect on the same origin keeps them", func(o, _ *recorder) (string, string) {
			o.redirect("/pods", "/real")
			return o.URL + "/pods", "/real"
		}, true},
		{"a redirect to another host drops them", func(o, other *recorder) (string, string) {
			o.redirect("/pods", fmt.Sprintf("http://other.test:%s/real", other.port()))
			return o.URL + "/pods", "/real"
		}, false},
		{"a redirect to another port of the same host drops them", func(o, other *recorder) (string, string) {
			o.redirect("/pods", other.URL+"/real")
			return o.URL + "/pods", "/real"
		}, false},
		{"a redirect back to the origin after another host still drops them", func(o, other *recorder) (string, string) {
			o.redirect("/pods", other.URL+"/bounce")
			other.redirect("/bounce", o.URL+"/real")
			return o.URL + "/pods", "/real"
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			origin, other := newRecorder(t, false), newRecorder(t, false)
			first, last := c.chain(origin, other)
			if err := fetchVia(t, loopbackClient(t, nil), first, header); err != nil {
				t.Fatalf("fetch: %v", err)
			}
			got := other.headers(last)
			if got == nil {
				got = origin.headers(last)
			}
			if got == nil {
				t.Fatalf("the redirect to %s was not followed", last)
			}
			for k := range header {
				if kept := got.Get(k) != ""; kept != c.wantKept {
					t.Errorf("header %s reached the redirect's target: %t, want %t", k, kept, c.wantKept)
				}
			}
		})
	}
}

func TestARedirectFromHTTPSToHTTPIsRefused(t *testing.T) {
	secure, plain := newRecorder(t, true), newRecorder(t, false)
	secure.redirect("/pods", plain.URL+"/pods")
	err := fetchVia(t, loopbackClient(t, secure), secure.URL+"/pods", nethttp.Header{"X-Api-Key": {"k3y"}})
	if !errors.Is(err, errDowngrade) {
		t.Fatalf("fetch error %v, want the downgrade refused", err)
	}
	if plain.headers("/pods") != nil {
		t.Fatal("the http URL was read after a redirect from https")
	}
}

func TestAPodListBeyondTheLimitIsRefused(t *testing.T) {
	many := make([]string, maxListPods+1)
	for i := range many {
		many[i] = fmt.Sprintf("p%d", i)
	}
	if _, _, err := decode([]byte(podListJSON(many...)), "http://h/pods", node); err == nil ||
		!strings.Contains(err.Error(), "the list has 1001 pods, more than the limit of 1000") {
		t.Fatalf("decode of %d pods: error %v, want the list limit", len(many), err)
	}
	pods, _, err := decode([]byte(podListJSON(many[:maxListPods]...)), "http://h/pods", node)
	if err != nil || len(pods) != maxListPods {
		t.Fatalf("decode of %d pods: %d pods, error %v; want them all", maxListPods, len(pods), err)
	}
}

func TestAPodReferencingASecretIsRefusedNamingTheURL(t *testing.T) {
	srv := newServer(t, podYAML("web", "nginx"))
	h := start(t, srv, nil)
	h.hit()
	h.next()
	srv.serve(nethttp.StatusOK, podYAML("web", "nginx")+"  volumes:\n  - name: s\n    secret: {secretName: admin}\n")
	h.nothingSent("a pod referencing a secret")
	h.nothingSent("a pod referencing a secret") // the read before has finished
	want := fmt.Sprintf(`"url"=%q "err"="pod: invalid pod manifest: pod default/web-node1: spec.volumes[0].secret: Forbidden: static pods may not reference secrets"`, srv.URL+"/pods")
	if h.logs.count(want) != 1 {
		t.Fatalf("want one log line with %s", want)
	}
}

func TestARefusedBodyIsNotDecodedAgain(t *testing.T) {
	invalid := podYAML("web", "nginx") + "  serviceAccountName: admin\n"
	srv := newServer(t, invalid)
	src := New(clocktesting.NewFakeClock(epoch), logr.Discard(), Config{URL: srv.URL + "/pods", NodeName: node})
	src.client = srv.Client()
	cfg := src.cfg.withDefaults()
	r := &reader{src: src, cfg: cfg, client: src.newClient(cfg), updates: make(chan []*corev1.Pod, 10)}
	for range 3 {
		r.poll(t.Context())
	}
	if r.decodes != 1 || r.failures != 3 || r.sent {
		t.Fatalf("after three reads of one refused body: %d decodes, %d failures, sent %t; want 1 decode, 3 failures, nothing sent", r.decodes, r.failures, r.sent)
	}
	srv.serve(nethttp.StatusOK, podYAML("web", "nginx"))
	r.poll(t.Context())
	if r.decodes != 2 || !r.sent {
		t.Fatalf("after a good body: %d decodes, sent %t; want 2 decodes and the pods sent", r.decodes, r.sent)
	}
}
