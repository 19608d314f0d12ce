package prober

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// outcome is what one probe run concluded.
type outcome int

const (
	outcomeUnknown outcome = iota
	outcomeSuccess
	outcomeWarning // success, with something to tell
	outcomeFailure
)

// maxOutput bounds the probe output kept for messages (exec output, HTTP
// body), as the kubelet's 10KiB.
const maxOutput = 10 << 10

// probe runs the worker's probe, with retries on errors, records an event
// for a failure, an error or a warning, and returns the result. An error
// means no verdict: the worker ignores the run.
func (p *Prober) probe(ctx context.Context, w *worker, podIP string) (Result, error) {
	var (
		out    outcome
		output string
		err    error
	)
	for range p.cfg.Retries {
		out, output, err = p.runProbe(ctx, w, podIP)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	t, log := w.key.probe, p.log.WithValues("pod", klog.KObj(w.pod), "containerName", w.key.container, "probeType", w.key.probe)
	if err != nil {
		log.V(1).Info("probe errored", "err", err)
		p.event(w, ReasonUnhealthy, "%s probe errored and resulted in unknown state: %s", t, err)
		return Failure, err
	}
	switch out {
	case outcomeSuccess:
		log.V(4).Info("probe succeeded")
		return Success, nil
	case outcomeWarning:
		log.V(4).Info("probe succeeded with a warning", "output", output)
		p.event(w, ReasonProbeWarning, "%s probe warning: %s", t, output)
		return Success, nil
	case outcomeFailure:
		log.V(1).Info("probe failed", "output", output)
		p.event(w, ReasonUnhealthy, "%s probe failed: %s", t, output)
		return Failure, nil
	}
	log.V(1).Info("probe result unknown")
	return Failure, nil
}

// runProbe runs the probe handler once.
func (p *Prober) runProbe(ctx context.Context, w *worker, podIP string) (outcome, string, error) {
	spec := &w.spec
	timeout := time.Duration(spec.TimeoutSeconds) * time.Second
	switch {
	case spec.Exec != nil:
		cmd := expandCommand(spec.Exec.Command, w.container.Env)
		return probeExec(ctx, p.exec, w.containerID, cmd, timeout)
	case spec.HTTPGet != nil:
		req, err := newHTTPRequest(ctx, spec.HTTPGet, &w.container, podIP, p.cfg.UserAgent)
		if err != nil {
			return outcomeUnknown, "", err
		}
		return probeHTTP(p.http, req, timeout)
	case spec.TCPSocket != nil:
		port, err := resolvePort(spec.TCPSocket.Port, &w.container)
		if err != nil {
			return outcomeUnknown, "", err
		}
		host := spec.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		return probeTCP(ctx, host, port, timeout)
	case spec.GRPC != nil:
		service := ""
		if spec.GRPC.Service != nil {
			service = *spec.GRPC.Service
		}
		return probeGRPC(ctx, podIP, int(spec.GRPC.Port), service, p.cfg.UserAgent, timeout)
	}
	return outcomeUnknown, "", fmt.Errorf("probe of container %s in pod %s: %w", w.key.container, klog.KObj(w.pod), errNoHandler)
}

var errNoHandler = errors.New("missing probe handler")

// event records a Warning event about the worker's container.
func (p *Prober) event(w *worker, reason, format string, args ...any) {
	p.rec.Eventf(containerRef(w.pod, &w.container, w.sidecar), corev1.EventTypeWarning, reason, format, args...)
}

// containerRef refers to a container of pod, as the kubelet's events do.
func containerRef(pod *corev1.Pod, c *corev1.Container, initContainer bool) *corev1.ObjectReference {
	field := "spec.containers{" + c.Name + "}"
	if initContainer {
		field = "spec.initContainers{" + c.Name + "}"
	}
	return &corev1.ObjectReference{
		Kind:       "Pod",
		APIVersion: "v1",
		Name:       pod.Name,
		Namespace:  pod.Namespace,
		UID:        pod.UID,
		FieldPath:  field,
	}
}
