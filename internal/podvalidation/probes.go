package podvalidation

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var uriSchemes = []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}

// validateProbesAndHooks checks the probes and lifecycle hooks of one
// container. A regular init container (not a sidecar) may have none of
// them: it runs to completion before anything is probed.
func validateProbesAndHooks(c *corev1.Container, init bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	sidecar := init && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
	if init && !sidecar {
		for _, f := range []struct {
			name string
			set  bool
		}{{"lifecycle", c.Lifecycle != nil}, {"livenessProbe", c.LivenessProbe != nil},
			{"readinessProbe", c.ReadinessProbe != nil}, {"startupProbe", c.StartupProbe != nil}} {
			if f.set {
				errs = append(errs, field.Forbidden(fld.Child(f.name), "may not be set for init containers without restartPolicy=Always"))
			}
		}
		return errs
	}
	errs = append(errs, validateProbe(c.LivenessProbe, true, fld.Child("livenessProbe"))...)
	errs = append(errs, validateProbe(c.ReadinessProbe, false, fld.Child("readinessProbe"))...)
	errs = append(errs, validateProbe(c.StartupProbe, true, fld.Child("startupProbe"))...)
	if p := c.ReadinessProbe; p != nil && p.TerminationGracePeriodSeconds != nil {
		errs = append(errs, field.Invalid(fld.Child("readinessProbe", "terminationGracePeriodSeconds"),
			*p.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
	}
	if l := c.Lifecycle; l != nil {
		errs = append(errs, validateHook(l.PostStart, fld.Child("lifecycle", "postStart"))...)
		errs = append(errs, validateHook(l.PreStop, fld.Child("lifecycle", "preStop"))...)
	}
	return errs
}

// validateProbe: exactly one handler, non-negative timings and thresholds,
// a success threshold of 1 for liveness and startup probes, and a positive
// probe-level grace period.
func validateProbe(p *corev1.Probe, onlyOneSuccess bool, fld *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	errs := validateHandler(handlerOf(p), fld)
	for _, f := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold}} {
		if f.v < 0 {
			errs = append(errs, field.Invalid(fld.Child(f.name), f.v, "must be greater than or equal to 0"))
		}
	}
	if onlyOneSuccess && p.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(fld.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
	}
	if g := p.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(fld.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
	}
	return errs
}

// handler is the union of probe and hook handlers.
type handler struct {
	exec      *corev1.ExecAction
	httpGet   *corev1.HTTPGetAction
	tcpSocket *corev1.TCPSocketAction
	grpc      *corev1.GRPCAction
	sleep     *corev1.SleepAction
}

func handlerOf(p *corev1.Probe) handler {
	return handler{exec: p.Exec, httpGet: p.HTTPGet, tcpSocket: p.TCPSocket, grpc: p.GRPC}
}

func validateHook(h *corev1.LifecycleHandler, fld *field.Path) field.ErrorList {
	if h == nil {
		return nil
	}
	return validateHandler(handler{exec: h.Exec, httpGet: h.HTTPGet, tcpSocket: h.TCPSocket, sleep: h.Sleep}, fld)
}

// validateHandler: exactly one handler type, each well formed.
func validateHandler(h handler, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if h.exec != nil {
		n++
		if len(h.exec.Command) == 0 {
			errs = append(errs, field.Required(fld.Child("exec", "command"), ""))
		}
	}
	if g := h.httpGet; g != nil {
		n++
		errs = append(errs, validatePortNumOrName(g.Port, fld.Child("httpGet", "port"))...)
		if g.Scheme != "" && !sets.New(uriSchemes...).Has(g.Scheme) {
			errs = append(errs, field.NotSupported(fld.Child("httpGet", "scheme"), g.Scheme, uriSchemes))
		}
		for i, hd := range g.HTTPHeaders {
			for _, msg := range validation.IsHTTPHeaderName(hd.Name) {
				errs = append(errs, field.Invalid(fld.Child("httpGet", "httpHeaders").Index(i).Child("name"), short(hd.Name), msg))
			}
		}
	}
	if t := h.tcpSocket; t != nil {
		n++
		errs = append(errs, validatePortNumOrName(t.Port, fld.Child("tcpSocket", "port"))...)
	}
	if g := h.grpc; g != nil {
		n++
		for _, msg := range validation.IsValidPortNum(int(g.Port)) {
			errs = append(errs, field.Invalid(fld.Child("grpc", "port"), g.Port, msg))
		}
	}
	if s := h.sleep; s != nil {
		n++
		if s.Seconds < 0 || s.Seconds > math.MaxInt32 {
			errs = append(errs, field.Invalid(fld.Child("sleep", "seconds"), s.Seconds, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(fld, "must specify a handler type"))
	case n > 1:
		errs = append(errs, field.Forbidden(fld, "may not specify more than 1 handler type"))
	}
	return errs
}

// validatePortNumOrName: a port number 1-65535 or an IANA service name.
func validatePortNumOrName(port intstr.IntOrString, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Type == intstr.Int {
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(fld, port.IntValue(), msg))
		}
		return errs
	}
	if port.StrVal == "" {
		return field.ErrorList{field.Required(fld, "")}
	}
	for _, msg := range validation.IsValidPortName(port.StrVal) {
		errs = append(errs, field.Invalid(fld, short(port.StrVal), msg))
	}
	return errs
}
