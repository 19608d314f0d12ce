package file

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestSetDefaults(t *testing.T) {
	t.Parallel()
	// defaulted is the pod spec setDefaults makes of in, with change
	// applied on top.
	defaulted := func(in corev1.PodSpec, change func(*corev1.PodSpec)) corev1.PodSpec {
		out := *in.DeepCopy()
		out.RestartPolicy = corev1.RestartPolicyAlways
		out.TerminationGracePeriodSeconds = ptr.To[int64](30)
		out.DNSPolicy = corev1.DNSClusterFirst
		out.SchedulerName = "default-scheduler"
		out.EnableServiceLinks = ptr.To(true)
		out.SecurityContext = &corev1.PodSecurityContext{}
		for _, cs := range [][]corev1.Container{out.InitContainers, out.Containers} {
			for i := range cs {
				cs[i].TerminationMessagePath = "/dev/termination-log"
				cs[i].TerminationMessagePolicy = corev1.TerminationMessageReadFile
				if cs[i].ImagePullPolicy == "" {
					cs[i].ImagePullPolicy = corev1.PullIfNotPresent
				}
			}
		}
		if change != nil {
			change(&out)
		}
		return out
	}
	one := func(image string) corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}
	}
	withPorts := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x:1", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}
	hostNet := *withPorts.DeepCopy()
	hostNet.HostNetwork = true
	limits := one("x:1")
	limits.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	limits.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	probed := one("x:1")
	probed.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{}}}
	initC := one("x:1")
	initC.InitContainers = []corev1.Container{{Name: "init", Image: "y"}}
	set := one("x:1")
	set.RestartPolicy = corev1.RestartPolicyNever
	set.TerminationGracePeriodSeconds = ptr.To[int64](5)
	set.DNSPolicy = corev1.DNSDefault
	set.EnableServiceLinks = ptr.To(false)
	set.Containers[0].ImagePullPolicy = corev1.PullNever
	env := one("x:1")
	env.Containers[0].Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	vols := one("x:1")
	vols.Volumes = []corev1.Volume{{Name: "scratch"}, {Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}}

	tests := []struct {
		name string
		in   corev1.PodSpec
		want corev1.PodSpec
	}{
		{"A tagged image gets the pod and container defaults and IfNotPresent.", one("nginx:1.27"), defaulted(one("nginx:1.27"), nil)},
		{"An untagged image is pulled Always.", one("nginx"), defaulted(one("nginx"), func(s *corev1.PodSpec) { s.Containers[0].ImagePullPolicy = corev1.PullAlways })},
		{"A :latest image is pulled Always.", one("nginx:latest"), defaulted(one("nginx:latest"), func(s *corev1.PodSpec) { s.Containers[0].ImagePullPolicy = corev1.PullAlways })},
		{"A registry port is not a tag.", one("reg:5000/nginx"), defaulted(one("reg:5000/nginx"), func(s *corev1.PodSpec) { s.Containers[0].ImagePullPolicy = corev1.PullAlways })},
		{"A digest counts as a tag.", one("nginx@sha256:abcd"), defaulted(one("nginx@sha256:abcd"), nil)},
		{"Ports default to TCP.", withPorts, defaulted(withPorts, func(s *corev1.PodSpec) { s.Containers[0].Ports[0].Protocol = corev1.ProtocolTCP })},
		{"Host network ports default their host port.", hostNet, defaulted(hostNet, func(s *corev1.PodSpec) {
			s.Containers[0].Ports[0].Protocol = corev1.ProtocolTCP
			s.Containers[0].Ports[0].HostPort = 80
		})},
		{"Limits without requests become requests.", limits, defaulted(limits, func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("1Gi")
		})},
		{"Probes get their timings and HTTP defaults.", probed, defaulted(probed, func(s *corev1.PodSpec) {
			p := s.Containers[0].LivenessProbe
			p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold = 1, 10, 1, 3
			p.HTTPGet.Path, p.HTTPGet.Scheme = "/", corev1.URISchemeHTTP
		})},
		{"Init containers are defaulted too.", initC, defaulted(initC, func(s *corev1.PodSpec) { s.InitContainers[0].ImagePullPolicy = corev1.PullAlways })},
		{"Values the manifest set are kept.", set, defaulted(set, func(s *corev1.PodSpec) {
			s.RestartPolicy, s.TerminationGracePeriodSeconds, s.DNSPolicy = corev1.RestartPolicyNever, ptr.To[int64](5), corev1.DNSDefault
			s.EnableServiceLinks = ptr.To(false)
			s.Containers[0].ImagePullPolicy = corev1.PullNever
		})},
		{"A field reference defaults to API version v1.", env, defaulted(env, func(s *corev1.PodSpec) { s.Containers[0].Env[0].ValueFrom.FieldRef.APIVersion = "v1" })},
		{"A volume without a source is an emptyDir.", vols, defaulted(vols, func(s *corev1.PodSpec) { s.Volumes[0].EmptyDir = &corev1.EmptyDirVolumeSource{} })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := &corev1.Pod{Spec: *tc.in.DeepCopy()}
			setDefaults(pod)
			if !apiequality.Semantic.DeepEqual(pod.Spec, tc.want) {
				t.Errorf("setDefaults:\n got %+v\nwant %+v", pod.Spec, tc.want)
			}
		})
	}
}
