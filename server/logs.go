package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crilogs "k8s.io/cri-client/pkg/logs"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// logRequest is a parsed /containerLogs query: the v1 PodLogOptions the
// API server sends, and the stream wanted.
type logRequest struct {
	opts   corev1.PodLogOptions
	stream string
}

// parseLogQuery parses a /containerLogs query as the kubelet does: the
// fields of v1.PodLogOptions (container, follow, previous, sinceSeconds,
// sinceTime, timestamps, tailLines, limitBytes, stream), the legacy "tail"
// ("all" for every line), and the checks of the API server's
// ValidatePodLogOptions. A parse error is a 400, a validation error a 422.
func parseLogQuery(q url.Values) (logRequest, int, error) {
	var lr logRequest
	if tail := q.Get("tail"); tail != "" {
		q = cloneValues(q)
		q.Set("tailLines", tail)
		if tail == "all" {
			q.Del("tailLines")
		}
	}
	var err error
	bools := map[string]*bool{"follow": &lr.opts.Follow, "previous": &lr.opts.Previous, "timestamps": &lr.opts.Timestamps,
		"insecureSkipTLSVerifyBackend": &lr.opts.InsecureSkipTLSVerifyBackend}
	for name, dst := range bools {
		if v := q.Get(name); v != "" {
			if *dst, err = strconv.ParseBool(v); err != nil {
				return lr, http.StatusBadRequest, fmt.Errorf("query parameter %s=%q: not a boolean", name, v)
			}
		}
	}
	ints := map[string]**int64{"sinceSeconds": &lr.opts.SinceSeconds, "tailLines": &lr.opts.TailLines, "limitBytes": &lr.opts.LimitBytes}
	for name, dst := range ints {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return lr, http.StatusBadRequest, fmt.Errorf("query parameter %s=%q: not an integer", name, v)
			}
			*dst = &n
		}
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return lr, http.StatusBadRequest, fmt.Errorf("query parameter sinceTime=%q: not an RFC 3339 time", v)
		}
		mt := metav1.NewTime(t)
		lr.opts.SinceTime = &mt
	}
	lr.stream = corev1.LogStreamAll
	if v := q.Get("stream"); v != "" {
		lr.stream = v
	}
	if err := validateLogOptions(&lr.opts, lr.stream); err != nil {
		return lr, http.StatusUnprocessableEntity, err
	}
	return lr, 0, nil
}

// validateLogOptions applies the API server's checks of PodLogOptions.
func validateLogOptions(o *corev1.PodLogOptions, stream string) error {
	switch {
	case o.TailLines != nil && *o.TailLines < 0:
		return errors.New("tailLines: must be greater than or equal to 0")
	case o.LimitBytes != nil && *o.LimitBytes < 1:
		return errors.New("limitBytes: must be greater than 0")
	case o.SinceSeconds != nil && o.SinceTime != nil:
		return errors.New("sinceSeconds and sinceTime: at most one may be set")
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		return errors.New("sinceSeconds: must be greater than 0")
	}
	switch stream {
	case corev1.LogStreamAll:
	case corev1.LogStreamStdout, corev1.LogStreamStderr:
		if o.TailLines != nil {
			return fmt.Errorf("stream %s: tailLines may only be used with stream All", stream)
		}
	default:
		return fmt.Errorf("stream %q: must be one of All, Stdout, Stderr", stream)
	}
	return nil
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// criLogOptions converts PodLogOptions to the CRI log reader's options at
// now, as the kubelet's NewLogOptions.
func criLogOptions(o *corev1.PodLogOptions, now time.Time) *crilogs.LogOptions {
	out := &crilogs.LogOptions{TailLines: o.TailLines, LimitBytes: o.LimitBytes, Follow: o.Follow, Timestamp: o.Timestamps}
	if o.SinceSeconds != nil {
		out.Since = now.Add(-time.Duration(*o.SinceSeconds) * time.Second)
	}
	if o.SinceTime != nil && o.SinceTime.After(out.Since) {
		out.Since = o.SinceTime.Time
	}
	return out
}

// logContainerID picks the container instance whose log is read, from the
// pod's status, with the kubelet's rules and messages.
func logContainerID(pod *corev1.Pod, container string, previous bool) (noderuntime.ContainerID, error) {
	st, ok := findContainerStatus(pod, container)
	if !ok {
		return noderuntime.ContainerID{}, fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", container, pod.Name)
	}
	last, state := st.LastTerminationState, st.State
	var id string
	switch {
	case previous:
		if last.Terminated == nil || last.Terminated.ContainerID == "" {
			return noderuntime.ContainerID{}, fmt.Errorf("previous terminated container %q in pod %q not found", container, pod.Name)
		}
		id = last.Terminated.ContainerID
	case state.Running != nil:
		id = st.ContainerID
	case state.Terminated != nil:
		id = state.Terminated.ContainerID
		if id == "" && last.Terminated != nil {
			id = last.Terminated.ContainerID
		}
		if id == "" {
			return noderuntime.ContainerID{}, fmt.Errorf("container %q in pod %q is terminated", container, pod.Name)
		}
	case last.Terminated != nil:
		if last.Terminated.ContainerID == "" {
			return noderuntime.ContainerID{}, fmt.Errorf("container %q in pod %q is terminated", container, pod.Name)
		}
		id = last.Terminated.ContainerID
	case state.Waiting != nil:
		switch reason := state.Waiting.Reason; reason {
		case "ErrImagePull":
			return noderuntime.ContainerID{}, fmt.Errorf("container %q in pod %q is waiting to start: image can't be pulled", container, pod.Name)
		case "ImagePullBackOff":
			return noderuntime.ContainerID{}, fmt.Errorf("container %q in pod %q is waiting to start: trying and failing to pull image", container, pod.Name)
		default:
			return noderuntime.ContainerID{}, fmt.Errorf("container %q in pod %q is waiting to start: %v", container, pod.Name, reason)
		}
	default:
		return noderuntime.ContainerID{}, fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", container, pod.Name)
	}
	return noderuntime.ParseContainerID(id)
}

// findContainerStatus finds the status of a container, init container or
// ephemeral container by name.
func findContainerStatus(pod *corev1.Pod, name string) (corev1.ContainerStatus, bool) {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for _, s := range list {
			if s.Name == name {
				return s, true
			}
		}
	}
	return corev1.ContainerStatus{}, false
}

// hasContainer reports whether the pod's spec has a container, init
// container or ephemeral container of that name.
func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// serveContainerLogs serves /containerLogs/{namespace}/{pod}/{container}.
func (s *streams) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	ns, name, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	lr, code, err := parseLogQuery(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), code)
		return
	}
	pod := s.findPod(ns, name)
	if pod == nil {
		http.Error(w, fmt.Sprintf("pod %q does not exist", name), http.StatusNotFound)
		return
	}
	if !hasContainer(pod, container) {
		http.Error(w, fmt.Sprintf("container %q not found in pod %q", container, name), http.StatusNotFound)
		return
	}
	reader, ok := s.runtime.(noderuntime.LogReader)
	if !ok {
		http.Error(w, "container logs are not supported by this runtime (it does not implement runtime.LogReader)", http.StatusNotImplemented)
		return
	}
	id, err := logContainerID(pod, container, lr.opts.Previous)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fw := &flushWriter{w: w}
	if f, ok := w.(http.Flusher); ok {
		fw.f = f
	}
	var stdout, stderr io.Writer = fw, fw
	switch lr.stream {
	case corev1.LogStreamStdout:
		stderr = io.Discard
	case corev1.LogStreamStderr:
		stdout = io.Discard
	}
	w.Header().Set("Content-Type", "text/plain")
	if err := reader.ReadLogs(r.Context(), id, criLogOptions(&lr.opts, s.clk.Now()), stdout, stderr); err != nil {
		if !fw.wrote {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.log.V(2).Info("container log stream ended with an error", "pod", ns+"/"+name, "container", container, "err", err.Error())
	}
}

// flushWriter flushes after every write, so followed logs reach the client
// line by line.
type flushWriter struct {
	w     io.Writer
	f     http.Flusher
	wrote bool
}

func (fw *flushWriter) Write(p []byte) (int, error) {
	fw.wrote = true
	n, err := fw.w.Write(p)
	if fw.f != nil {
		fw.f.Flush()
	}
	return n, err
}
