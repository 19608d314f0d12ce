package env

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// masterService is the Service every pod's environment names, from the
// default namespace, whatever enableServiceLinks says.
const masterService = "kubernetes"

// annotationSource is the config.source annotation; "api" marks pods from
// the API server.
const annotationSource = "kubernetes.io/config.source"

// serviceEnv returns the service variables pod sees: those of the
// kubernetes Service of the default namespace, and, when
// enableServiceLinks is true (the default), those of every Service of the
// pod's namespace. Without a ServiceLister there are none; before the
// Services have been listed once, a pod from the API server gets an error
// (the kubelet's), so that it never starts without KUBERNETES_SERVICE_HOST.
func (b *Builder) serviceEnv(pod *corev1.Pod) (map[string]string, error) {
	out := map[string]string{}
	sl := b.deps.Services
	if sl == nil {
		return out, nil
	}
	if !isStatic(pod) && !sl.HasSynced() {
		return nil, errors.New("services have not yet been read at least once, cannot construct envvars")
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	chosen := map[string]*corev1.Service{}
	defaults, err := sl.ListServices(metav1.NamespaceDefault)
	if err != nil {
		return nil, fmt.Errorf("failed to list services when setting up env vars: %w", err)
	}
	for _, svc := range defaults {
		if svc.Name == masterService && serviceIPSet(svc) {
			chosen[svc.Name] = svc
		}
	}
	if links {
		own, err := sl.ListServices(pod.Namespace)
		if err != nil {
			return nil, fmt.Errorf("failed to list services when setting up env vars: %w", err)
		}
		for _, svc := range own {
			if !serviceIPSet(svc) {
				continue
			}
			if pod.Namespace == metav1.NamespaceDefault && svc.Name == masterService {
				continue // already chosen
			}
			chosen[svc.Name] = svc
		}
	}
	for _, svc := range chosen {
		for _, e := range FromService(svc) {
			out[e.Name] = e.Value
		}
	}
	return out, nil
}

// isStatic reports whether pod comes from a source other than the API
// server.
func isStatic(pod *corev1.Pod) bool {
	src, ok := pod.Annotations[annotationSource]
	return ok && src != "api"
}

// serviceIPSet reports whether svc has a cluster IP (not headless).
func serviceIPSet(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.ClusterIP != ""
}

// FromService returns the variables of one Service, as the kubelet's
// envvars.FromServices makes them: {SVC}_SERVICE_HOST, {SVC}_SERVICE_PORT
// (the first port), {SVC}_SERVICE_PORT_{NAME} per named port, and the
// docker-link variables {SVC}_PORT, {SVC}_PORT_{P}_{PROTO}[_PROTO|_PORT|_ADDR].
// A Service without a cluster IP or without ports gives none.
func FromService(svc *corev1.Service) []corev1.EnvVar {
	if !serviceIPSet(svc) || len(svc.Spec.Ports) == 0 {
		return nil
	}
	prefix := varName(svc.Name)
	ip := svc.Spec.ClusterIP
	out := []corev1.EnvVar{
		{Name: prefix + "_SERVICE_HOST", Value: ip},
		{Name: prefix + "_SERVICE_PORT", Value: strconv.Itoa(int(svc.Spec.Ports[0].Port))},
	}
	for _, p := range svc.Spec.Ports {
		if p.Name != "" {
			out = append(out, corev1.EnvVar{Name: prefix + "_SERVICE_PORT_" + varName(p.Name), Value: strconv.Itoa(int(p.Port))})
		}
	}
	for i, p := range svc.Spec.Ports {
		proto := string(corev1.ProtocolTCP)
		if p.Protocol != "" {
			proto = string(p.Protocol)
		}
		lower := strings.ToLower(proto)
		url := fmt.Sprintf("%s://%s", lower, net.JoinHostPort(ip, strconv.Itoa(int(p.Port))))
		if i == 0 {
			out = append(out, corev1.EnvVar{Name: prefix + "_PORT", Value: url})
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
		out = append(out,
			corev1.EnvVar{Name: pp, Value: url},
			corev1.EnvVar{Name: pp + "_PROTO", Value: lower},
			corev1.EnvVar{Name: pp + "_PORT", Value: strconv.Itoa(int(p.Port))},
			corev1.EnvVar{Name: pp + "_ADDR", Value: ip},
		)
	}
	return out
}

// varName turns a Service or port name into a variable name part.
func varName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}
