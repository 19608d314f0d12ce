package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// streams serves the routes that reach into containers: logs, exec,
// attach, port-forward and run.
type streams struct {
	pods    PodLister
	runtime noderuntime.Runtime
	clk     clock.Clock
	log     logr.Logger
	// idleTimeout closes a proxied exec, attach or port-forward
	// connection without traffic for this long; 0 leaves it open.
	idleTimeout time.Duration
}

// register adds the container routes, with and without the pod UID segment
// as the kubelet has them.
func (s *streams) register(mux router) {
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.serveContainerLogs)
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, tail := range []string{"/{namespace}/{pod}/{container}", "/{namespace}/{pod}/{uid}/{container}"} {
			mux.HandleFunc(method+" /exec"+tail, s.serveExec)
			mux.HandleFunc(method+" /attach"+tail, s.serveAttach)
		}
		mux.HandleFunc(method+" /portForward/{namespace}/{pod}", s.servePortForward)
		mux.HandleFunc(method+" /portForward/{namespace}/{pod}/{uid}", s.servePortForward)
	}
	mux.HandleFunc("POST /run/{namespace}/{pod}/{container}", s.serveRun)
	mux.HandleFunc("POST /run/{namespace}/{pod}/{uid}/{container}", s.serveRun)
}

// findPod returns the node's pod with that namespace and name, or nil.
func (s *streams) findPod(namespace, name string) *corev1.Pod {
	for _, p := range s.pods.GetPods() {
		if p != nil && p.Namespace == namespace && p.Name == name {
			return p
		}
	}
	return nil
}

// runningContainer resolves the path's pod and container to the running
// container's ID, writing the error response when it cannot.
func (s *streams) runningContainer(w http.ResponseWriter, r *http.Request) (noderuntime.ContainerID, bool) {
	ns, name, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	pod := s.findPod(ns, name)
	if pod == nil || (r.PathValue("uid") != "" && types.UID(r.PathValue("uid")) != pod.UID) {
		http.Error(w, "pod does not exist", http.StatusNotFound)
		return noderuntime.ContainerID{}, false
	}
	st, ok := findContainerStatus(pod, container)
	if !ok || st.State.Running == nil || st.ContainerID == "" {
		if !hasContainer(pod, container) {
			http.Error(w, fmt.Sprintf("container %q not found in pod %q", container, name), http.StatusNotFound)
		} else {
			http.Error(w, fmt.Sprintf("container %q in pod %q is not running", container, name), http.StatusBadRequest)
		}
		return noderuntime.ContainerID{}, false
	}
	id, err := noderuntime.ParseContainerID(st.ContainerID)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return noderuntime.ContainerID{}, false
	}
	return id, true
}

// streamer returns the runtime's Streamer, writing a 501 without one.
func (s *streams) streamer(w http.ResponseWriter) (noderuntime.Streamer, bool) {
	st, ok := s.runtime.(noderuntime.Streamer)
	if !ok {
		http.Error(w, "exec, attach and port-forward are not supported by this runtime (it does not implement runtime.Streamer)", http.StatusNotImplemented)
	}
	return st, ok
}

func (s *streams) serveExec(w http.ResponseWriter, r *http.Request) {
	s.serveRemoteCommand(w, r, true)
}

func (s *streams) serveAttach(w http.ResponseWriter, r *http.Request) {
	s.serveRemoteCommand(w, r, false)
}

// serveRemoteCommand serves exec (with the "command" query parameters) or
// attach: it asks the runtime for a streaming URL and proxies the upgraded
// connection there. A WebSocket request with the v5 stream-close protocol
// is translated to SPDY for the runtime, as the kubelet does.
func (s *streams) serveRemoteCommand(w http.ResponseWriter, r *http.Request, exec bool) {
	opts, err := remotecommandserver.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	streamer, ok := s.streamer(w)
	if !ok {
		return
	}
	id, ok := s.runningContainer(w, r)
	if !ok {
		return
	}
	var u *url.URL
	if exec {
		cmd := r.URL.Query()["command"]
		if len(cmd) == 0 {
			http.Error(w, "exec needs a command (query parameter command)", http.StatusBadRequest)
			return
		}
		u, err = streamer.GetExec(r.Context(), id, cmd, opts.Stdin, opts.Stdout, opts.Stderr, opts.TTY)
	} else {
		u, err = streamer.GetAttach(r.Context(), id, opts.Stdin, opts.Stdout, opts.Stderr, opts.TTY)
	}
	if err != nil {
		_ = streaming.WriteError(err, w)
		return
	}
	var h http.Handler = proxy.NewUpgradeAwareHandler(u, nil, false, true, &responder{log: s.log})
	if wsstream.IsWebSocketRequestWithStreamCloseProtocol(r) {
		h = translator.NewStreamTranslatorHandler(u, nil, 0, translator.Options{
			Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY,
		})
	}
	h.ServeHTTP(s.idle(w), r)
}

// servePortForward serves port-forward to the pod's sandbox. A WebSocket
// request with the SPDY tunneling protocol (kubectl 1.30+) is unwrapped to
// SPDY for the runtime, as the kubelet does.
func (s *streams) servePortForward(w http.ResponseWriter, r *http.Request) {
	tunnel := wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
	opts := &portforward.V4Options{}
	if !tunnel {
		var err error
		if opts, err = portforward.NewV4Options(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	streamer, ok := s.streamer(w)
	if !ok {
		return
	}
	pod := s.findPod(r.PathValue("namespace"), r.PathValue("pod"))
	if pod == nil || (r.PathValue("uid") != "" && types.UID(r.PathValue("uid")) != pod.UID) {
		http.Error(w, "pod does not exist", http.StatusNotFound)
		return
	}
	u, err := streamer.GetPortForward(r.Context(), pod.UID, pod.Name, pod.Namespace, opts.Ports)
	if err != nil {
		_ = streaming.WriteError(err, w)
		return
	}
	var h http.Handler = proxy.NewUpgradeAwareHandler(u, nil, false, true, &responder{log: s.log})
	if tunnel {
		h = translator.NewTunnelingHandler(h)
	}
	h.ServeHTTP(s.idle(w), r)
}

// idle wraps w with the streaming connection idle timeout, when there is
// one.
func (s *streams) idle(w http.ResponseWriter) http.ResponseWriter {
	if s.idleTimeout <= 0 {
		return w
	}
	return withIdleTimeout(w, s.clk, s.idleTimeout)
}

// serveRun runs the query's "cmd" (split at spaces, as the kubelet's legacy
// /run) in the container and returns its output.
func (s *streams) serveRun(w http.ResponseWriter, r *http.Request) {
	runner, ok := s.runtime.(noderuntime.CommandRunner)
	if !ok {
		http.Error(w, "run is not supported by this runtime (it does not implement runtime.CommandRunner)", http.StatusNotImplemented)
		return
	}
	id, ok := s.runningContainer(w, r)
	if !ok {
		return
	}
	cmd := strings.Split(r.URL.Query().Get("cmd"), " ")
	out, err := runner.RunInContainer(r.Context(), id, cmd, 0)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// responder reports a failed proxy connection.
type responder struct{ log logr.Logger }

// Error implements proxy.ErrorResponder: the code of an API status error
// (400 for a request that is not an upgrade), else 500 as the kubelet's.
func (r *responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	code := http.StatusInternalServerError
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Code != 0 {
		code = int(status.Status().Code)
	}
	r.log.Error(err, "error while proxying a stream", "code", code)
	http.Error(w, err.Error(), code)
}
