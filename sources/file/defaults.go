package file

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The API server's defaults for fields a pod manifest usually leaves out.
// Pods read from the API server already carry them; static pods get them
// here so that the rest of the agent sees one shape of pod.
const (
	defaultGracePeriodSeconds       = int64(30)
	defaultSchedulerName            = "default-scheduler"
	defaultTerminationMessagePath   = "/dev/termination-log"
	defaultProbeTimeoutSeconds      = int32(1)
	defaultProbePeriodSeconds       = int32(10)
	defaultProbeSuccessThreshold    = int32(1)
	defaultProbeFailureThreshold    = int32(3)
	defaultHTTPGetPath              = "/"
	defaultFieldRefAPIVersion       = "v1"
	latestTag                       = "latest"
	digestSeparator                 = "@"
	defaultTerminationMessagePolicy = corev1.TerminationMessageReadFile
)

// setDefaults fills in, in place, what the API server's defaulting
// (k8s.io/kubernetes/pkg/apis/core/v1 SetDefaults_*) fills in for a pod: the
// pod-level policies, then each container's and init container's, then the
// volumes. It never overwrites a value the manifest set.
func setDefaults(pod *corev1.Pod) {
	spec := &pod.Spec
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.TerminationGracePeriodSeconds == nil {
		grace := defaultGracePeriodSeconds
		spec.TerminationGracePeriodSeconds = &grace
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = defaultSchedulerName
	}
	if spec.EnableServiceLinks == nil {
		enable := corev1.DefaultEnableServiceLinks
		spec.EnableServiceLinks = &enable
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	for i := range spec.InitContainers {
		setContainerDefaults(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		setContainerDefaults(&spec.Containers[i], spec.HostNetwork)
	}
	for i := range spec.Volumes {
		if spec.Volumes[i].VolumeSource == (corev1.VolumeSource{}) {
			spec.Volumes[i].EmptyDir = &corev1.EmptyDirVolumeSource{}
		}
	}
}

func setContainerDefaults(c *corev1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = defaultTerminationMessagePath
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = defaultTerminationMessagePolicy
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		setProbeDefaults(probe)
	}
	for i := range c.Env {
		if ref := c.Env[i].ValueFrom; ref != nil && ref.FieldRef != nil && ref.FieldRef.APIVersion == "" {
			ref.FieldRef.APIVersion = defaultFieldRefAPIVersion
		}
	}
	// A limit without a request requests the limit.
	for name, limit := range c.Resources.Limits {
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		if _, ok := c.Resources.Requests[name]; !ok {
			c.Resources.Requests[name] = limit.DeepCopy()
		}
	}
}

func setProbeDefaults(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = defaultProbeTimeoutSeconds
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = defaultProbePeriodSeconds
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = defaultProbeSuccessThreshold
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = defaultProbeFailureThreshold
	}
	if h := p.HTTPGet; h != nil {
		if h.Path == "" {
			h.Path = defaultHTTPGetPath
		}
		if h.Scheme == "" {
			h.Scheme = corev1.URISchemeHTTP
		}
	}
}

// pullPolicy is Always for an image tagged ":latest" or not tagged at all,
// and IfNotPresent otherwise. A digest ("name@sha256:...") counts as a tag.
func pullPolicy(image string) corev1.PullPolicy {
	name, _, hasDigest := strings.Cut(image, digestSeparator)
	tag := ""
	// A colon before the last slash belongs to a registry host:port.
	if colon := strings.LastIndex(name, ":"); colon > strings.LastIndex(name, "/") {
		tag = name[colon+1:]
	}
	if tag == latestTag || (tag == "" && !hasDigest) {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}
