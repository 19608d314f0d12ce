package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/server"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client returns an HTTP client that keeps no idle connections.
func client() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := client().Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	return l
}

func TestServeAnswersAndStopsWhenTheContextEnds(t *testing.T) {
	l := listenLocal(t)
	srv := server.New(podList{runningPod("web")}, []server.HealthCheck{check{name: "syncloop"}},
		nil, logr.Discard(), server.Config{Port: server.DefaultPort})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()

	base := "http://" + l.Addr().String()
	if code, body := fetch(t, base+"/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}
	if code, body := fetch(t, base+"/pods"); code != http.StatusOK || !strings.Contains(body, `"name":"web"`) {
		t.Errorf("/pods = %d %q, want 200 with pod web", code, body)
	}
	if got := srv.Addr(); got == nil || got.String() != l.Addr().String() {
		t.Errorf("Addr() = %v, want %v", got, l.Addr())
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve returned %v after ctx ended, want nil", err)
	}
	if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
		t.Errorf("listener still accepts connections after Serve returned")
	}
}

func TestRunListensOnTheConfiguredAddress(t *testing.T) {
	// Find a free port, then let Run listen on it.
	l := listenLocal(t)
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	log := newRecorder()
	srv := server.New(podList(nil), nil, nil, log.logger(), server.Config{Address: "127.0.0.1", Port: port})
	if srv.Addr() != nil {
		t.Errorf("Addr() = %v before Run, want nil", srv.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	log.waitFor("serving")

	want := "127.0.0.1:" + strconv.Itoa(port)
	if got := srv.Addr(); got == nil || got.String() != want {
		t.Errorf("Addr() = %v, want %s", got, want)
	}
	if code, _ := fetch(t, "http://"+want+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v after ctx ended, want nil", err)
	}
}

func TestRunFailsNamingTheAddressItCannotListenOn(t *testing.T) {
	t.Parallel()
	busy := listenLocal(t)
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port

	srv := server.New(podList(nil), nil, nil, logr.Discard(), server.Config{Address: "127.0.0.1", Port: port})
	err := srv.Run(context.Background())
	want := "listen on 127.0.0.1:" + strconv.Itoa(port)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run() = %v, want an error containing %q", err, want)
	}
}

func TestRunWithPortZeroIsOffAndReturnsAtOnce(t *testing.T) {
	t.Parallel()
	log := newRecorder()
	srv := server.New(podList(nil), nil, nil, log.logger(), server.Config{})
	// Run must not wait for ctx; the deadline only bounds a broken Run,
	// which the log and Addr checks below then catch.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Run(ctx); err != nil {
		t.Fatalf("Run() = %v, want nil", err)
	}
	if msgs := log.messages(); len(msgs) != 1 || msgs[0] != "read-only server is turned off" {
		t.Errorf("logged %q, want [\"read-only server is turned off\"]", msgs)
	}
	if srv.Addr() != nil {
		t.Errorf("Addr() = %v, want nil when off", srv.Addr())
	}
}

// stuckLister blocks GetPods until released.
type stuckLister struct {
	entered chan struct{}
	release chan struct{}
}

func (s stuckLister) GetPods() []*corev1.Pod {
	close(s.entered)
	<-s.release
	return nil
}

func TestServeClosesConnectionsThatOutliveTheShutdownTimeout(t *testing.T) {
	l := listenLocal(t)
	lister := stuckLister{entered: make(chan struct{}), release: make(chan struct{})}
	log := newRecorder()
	srv := server.New(lister, nil, nil, log.logger(),
		server.Config{Port: server.DefaultPort, ShutdownTimeout: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()

	reqErr := make(chan error, 1)
	go func() {
		resp, err := client().Get("http://" + l.Addr().String() + "/pods")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		reqErr <- err
	}()
	<-lister.entered

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve returned %v, want nil", err)
	}
	close(lister.release)
	if err := <-reqErr; err == nil {
		t.Errorf("the stuck request succeeded, want its connection closed")
	}
	found := false
	for _, m := range log.messages() {
		found = found || m == "graceful shutdown did not finish, closing connections"
	}
	if !found {
		t.Errorf("forced close was not logged; logged %q", log.messages())
	}
}
