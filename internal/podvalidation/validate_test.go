package podvalidation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// validPod is a pod as a source hands it over after defaulting, using most
// of the fields Validate checks, all of them valid.
func validPod() *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	probe := func() *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
			TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	}
	container := func(name string) corev1.Container {
		return corev1.Container{
			Name: name, Image: "nginx:1.27", ImagePullPolicy: corev1.PullIfNotPresent,
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}
	}
	main := container("main")
	main.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
	main.Env = []corev1.EnvVar{{Name: "MODE", Value: "x"}, {Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	main.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "a/b"}, {Name: "conf", MountPath: "/etc/app", ReadOnly: true}}
	main.LivenessProbe, main.ReadinessProbe, main.StartupProbe = probe(), probe(), probe()
	main.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 2}}}
	main.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	main.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000), AllowPrivilegeEscalation: ptr.To(false)}
	sidecar := container("log")
	sidecar.RestartPolicy = &always
	sidecar.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 2, FailureThreshold: 3}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node-1", Namespace: "default", UID: "0123",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"kubernetes.io/config.hash": "0123"}},
		Spec: corev1.PodSpec{
			InitContainers:                []corev1.Container{container("setup"), sidecar},
			Containers:                    []corev1.Container{main},
			Volumes:                       []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, {Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Items: []corev1.KeyToPath{{Key: "k", Path: "conf/app.ini"}}}}}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			ActiveDeadlineSeconds:         ptr.To[int64](600),
			DNSPolicy:                     corev1.DNSClusterFirst,
			NodeName:                      "node-1",
			SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0), FSGroup: ptr.To[int64](2000), Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_forward", Value: "1"}}},
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			HostAliases:                   []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"db.local"}}},
		},
	}
}

// restartOn is a rule restarting a container on the exit codes.
func restartOn(codes ...int32) corev1.ContainerRestartRule {
	return corev1.ContainerRestartRule{Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: codes}}
}

func TestValidPodsPass(t *testing.T) {
	t.Parallel()
	for name, pod := range map[string]*corev1.Pod{
		"a pod using most checked fields": validPod(),
		"a host-network pod whose host ports equal its container ports": func() *corev1.Pod {
			p := validPod()
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 80
			return p
		}(),
		"an extended resource requested at its limit": func() *corev1.Pod {
			p := validPod()
			q := resource.MustParse("2")
			p.Spec.Containers[0].Resources.Limits["example.com/gpu"] = q
			p.Spec.Containers[0].Resources.Requests["example.com/gpu"] = q
			return p
		}(),
		"a regular container overriding the pod's restart policy": func() *corev1.Pod {
			p := validPod()
			p.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
			return p
		}(),
		"restartPolicyRules on a regular container": func() *corev1.Pod {
			p := validPod()
			p.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			notIn := restartOn(0, 1)
			notIn.ExitCodes.Operator = corev1.ContainerRestartRuleOnExitCodesOpNotIn
			p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{restartOn(42), notIn}
			return p
		}(),
		"an init container with its own OnFailure and a rule": func() *corev1.Pod {
			p := validPod()
			p.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
			p.Spec.InitContainers[0].RestartPolicyRules = []corev1.ContainerRestartRule{restartOn(3)}
			return p
		}(),
		"annotations just under 256 KiB": func() *corev1.Pod {
			p := validPod()
			p.Annotations = map[string]string{"big": strings.Repeat("x", 256*1024-3)}
			return p
		}(),
	} {
		if errs := Validate(pod); len(errs) != 0 {
			t.Errorf("%s: Validate() = %v, want no errors", name, errs)
		}
	}
}

func TestValidateNamesTheFieldAndTheRule(t *testing.T) {
	t.Parallel()
	type mutate func(p *corev1.Pod)
	main := func(f func(c *corev1.Container)) mutate { return func(p *corev1.Pod) { f(&p.Spec.Containers[0]) } }
	cases := []struct {
		name   string
		mutate mutate
		// field is the path the error must name; typ its type; detail a
		// substring of its message ("" for any).
		field  string
		typ    field.ErrorType
		detail string
	}{
		// Metadata, through apimachinery.
		{"a missing name is required", func(p *corev1.Pod) { p.Name = "" }, "metadata.name", field.ErrorTypeRequired, ""},
		{"a name that is not a DNS subdomain is invalid", func(p *corev1.Pod) { p.Name = "Web_1" }, "metadata.name", field.ErrorTypeInvalid, "RFC 1123"},
		{"a namespace that is not a DNS label is invalid", func(p *corev1.Pod) { p.Namespace = "a.b" }, "metadata.namespace", field.ErrorTypeInvalid, ""},
		{"an invalid label value is invalid", func(p *corev1.Pod) { p.Labels["app"] = "-bad-" }, "metadata.labels", field.ErrorTypeInvalid, ""},
		{"an annotation key that is not a qualified name is invalid", func(p *corev1.Pod) { p.Annotations["a b"] = "x" }, "metadata.annotations", field.ErrorTypeInvalid, ""},
		{"annotations over 256 KiB in total are too long", func(p *corev1.Pod) {
			p.Annotations["a"] = strings.Repeat("x", 200*1024)
			p.Annotations["b"] = strings.Repeat("x", 100*1024)
		}, "metadata.annotations", field.ErrorTypeTooLong, "262144"},
		{"a 9 MiB annotation is too long", func(p *corev1.Pod) { p.Annotations["big"] = strings.Repeat("x", 9<<20) }, "metadata.annotations", field.ErrorTypeTooLong, ""},
		// Containers.
		{"a pod without containers is refused", func(p *corev1.Pod) { p.Spec.Containers = nil }, "spec.containers", field.ErrorTypeRequired, ""},
		{"a container without a name is refused", main(func(c *corev1.Container) { c.Name = "" }), "spec.containers[0].name", field.ErrorTypeRequired, ""},
		{"a container name that is not a DNS label is refused", main(func(c *corev1.Container) { c.Name = "Main" }), "spec.containers[0].name", field.ErrorTypeInvalid, "RFC 1123 label"},
		{"a container named like an init container is a duplicate", main(func(c *corev1.Container) { c.Name = "setup" }), "spec.containers[0].name", field.ErrorTypeDuplicate, ""},
		{"a container without an image is refused", main(func(c *corev1.Container) { c.Image = "" }), "spec.containers[0].image", field.ErrorTypeRequired, ""},
		{"an image with surrounding spaces is refused", main(func(c *corev1.Container) { c.Image = " nginx " }), "spec.containers[0].image", field.ErrorTypeInvalid, "whitespace"},
		{"an unknown pull policy is not supported", main(func(c *corev1.Container) { c.ImagePullPolicy = "Sometimes" }), "spec.containers[0].imagePullPolicy", field.ErrorTypeNotSupported, ""},
		{"an unknown container restartPolicy is not supported", main(func(c *corev1.Container) { c.RestartPolicy = ptr.To[corev1.ContainerRestartPolicy]("Sometimes") }), "spec.containers[0].restartPolicy", field.ErrorTypeNotSupported, ""},
		{"an unknown init container restartPolicy is not supported", func(p *corev1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = ptr.To[corev1.ContainerRestartPolicy]("Sometimes")
		}, "spec.initContainers[0].restartPolicy", field.ErrorTypeNotSupported, "Always"},
		{"restartPolicyRules need a restartPolicy", main(func(c *corev1.Container) {
			c.RestartPolicyRules = []corev1.ContainerRestartRule{restartOn(42)}
		}), "spec.containers[0].restartPolicy", field.ErrorTypeRequired, "must specify restartPolicy"},
		{"a sidecar may have no restartPolicyRules", func(p *corev1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			p.Spec.InitContainers[0].RestartPolicyRules = []corev1.ContainerRestartRule{restartOn(42)}
		}, "spec.initContainers[0].restartPolicyRules", field.ErrorTypeForbidden, "restart policy Always"},
		{"a rule needs exitCodes", main(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			c.RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart}}
		}), "spec.containers[0].restartPolicyRules[0].exitCodes", field.ErrorTypeRequired, ""},
		{"an unknown rule operator is not supported", main(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			rule := restartOn(42)
			rule.ExitCodes.Operator = "Maybe"
			c.RestartPolicyRules = []corev1.ContainerRestartRule{rule}
		}), "spec.containers[0].restartPolicyRules[0].exitCodes.operator", field.ErrorTypeNotSupported, ""},
		{"an unknown rule action is not supported", main(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			rule := restartOn(42)
			rule.Action = "Explode"
			c.RestartPolicyRules = []corev1.ContainerRestartRule{rule}
		}), "spec.containers[0].restartPolicyRules[0].action", field.ErrorTypeNotSupported, ""},
		{"RestartAllContainers is refused as not supported", main(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			rule := restartOn(42)
			rule.Action = corev1.ContainerRestartRuleActionRestartAllContainers
			c.RestartPolicyRules = []corev1.ContainerRestartRule{rule}
		}), "spec.containers[0].restartPolicyRules[0].action", field.ErrorTypeForbidden, "nodekit"},
		{"more than 20 rules are too many", main(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			for range 21 {
				c.RestartPolicyRules = append(c.RestartPolicyRules, restartOn(1))
			}
		}), "spec.containers[0].restartPolicyRules", field.ErrorTypeTooMany, ""},
		{"more than 255 exit codes are too many", main(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			rule := restartOn()
			for i := range 256 {
				rule.ExitCodes.Values = append(rule.ExitCodes.Values, int32(i))
			}
			c.RestartPolicyRules = []corev1.ContainerRestartRule{rule}
		}), "spec.containers[0].restartPolicyRules[0].exitCodes.values", field.ErrorTypeTooMany, ""},
		// Ports.
		{"container port 0 is required", main(func(c *corev1.Container) { c.Ports[0].ContainerPort = 0 }), "spec.containers[0].ports[0].containerPort", field.ErrorTypeRequired, ""},
		{"container port 70000 is out of range", main(func(c *corev1.Container) { c.Ports[0].ContainerPort = 70000 }), "spec.containers[0].ports[0].containerPort", field.ErrorTypeInvalid, "between 1 and 65535"},
		{"a negative host port is out of range", main(func(c *corev1.Container) { c.Ports[0].HostPort = -1 }), "spec.containers[0].ports[0].hostPort", field.ErrorTypeInvalid, "between 1 and 65535"},
		{"an unknown protocol is not supported", main(func(c *corev1.Container) { c.Ports[0].Protocol = "ICMP" }), "spec.containers[0].ports[0].protocol", field.ErrorTypeNotSupported, ""},
		{"two ports with one name are duplicates", main(func(c *corev1.Container) {
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: "http", ContainerPort: 81, Protocol: corev1.ProtocolTCP})
		}), "spec.containers[0].ports[1].name", field.ErrorTypeDuplicate, ""},
		{"a port name longer than 15 characters is invalid", main(func(c *corev1.Container) { c.Ports[0].Name = "a-very-long-port-name" }), "spec.containers[0].ports[0].name", field.ErrorTypeInvalid, "15"},
		{"on the host network a host port must equal the container port", func(p *corev1.Pod) { p.Spec.HostNetwork = true }, "spec.containers[0].ports[0].hostPort", field.ErrorTypeInvalid, "hostNetwork"},
		{"one host port used twice is a duplicate", func(p *corev1.Pod) {
			p.Spec.InitContainers[1].Ports = []corev1.ContainerPort{{ContainerPort: 9, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		}, "spec.containers[0].ports[0].hostPort", field.ErrorTypeDuplicate, ""},
		// Environment.
		{"an env var name with '=' is invalid", main(func(c *corev1.Container) { c.Env[0].Name = "A=B" }), "spec.containers[0].env[0].name", field.ErrorTypeInvalid, "'='"},
		{"an env var with a value and a valueFrom is refused", main(func(c *corev1.Container) { c.Env[1].Value = "x" }), "spec.containers[0].env[1].valueFrom", field.ErrorTypeInvalid, "`value`"},
		{"an empty valueFrom is refused", main(func(c *corev1.Container) { c.Env[1].ValueFrom = &corev1.EnvVarSource{} }), "spec.containers[0].env[1].valueFrom", field.ErrorTypeInvalid, "must specify one of"},
		{"a secretKeyRef without a key is refused", main(func(c *corev1.Container) {
			c.Env[1].ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}
		}), "spec.containers[0].env[1].valueFrom.secretKeyRef.key", field.ErrorTypeRequired, ""},
		{"envFrom with two sources is refused", main(func(c *corev1.Container) {
			c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a"}},
				SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "b"}}}}
		}), "spec.containers[0].envFrom[0]", field.ErrorTypeInvalid, "more than one"},
		// Volume mounts.
		{"a mount of an unknown volume is not found", main(func(c *corev1.Container) { c.VolumeMounts[0].Name = "nope" }), "spec.containers[0].volumeMounts[0].name", field.ErrorTypeNotFound, ""},
		{"a mount without a mount path is refused", main(func(c *corev1.Container) { c.VolumeMounts[0].MountPath = "" }), "spec.containers[0].volumeMounts[0].mountPath", field.ErrorTypeRequired, ""},
		{"two mounts at one path are refused", main(func(c *corev1.Container) { c.VolumeMounts[1].MountPath = "/data" }), "spec.containers[0].volumeMounts[1].mountPath", field.ErrorTypeInvalid, "unique"},
		{"an absolute subPath is refused", main(func(c *corev1.Container) { c.VolumeMounts[0].SubPath = "/etc" }), "spec.containers[0].volumeMounts[0].subPath", field.ErrorTypeInvalid, "relative"},
		{"a subPath with '..' is refused", main(func(c *corev1.Container) { c.VolumeMounts[0].SubPath = "a/../../etc" }), "spec.containers[0].volumeMounts[0].subPath", field.ErrorTypeInvalid, "'..'"},
		{"an init container's mount is checked too", func(p *corev1.Pod) {
			p.Spec.InitContainers[0].VolumeMounts = []corev1.VolumeMount{{Name: "missing", MountPath: "/m"}}
		}, "spec.initContainers[0].volumeMounts[0].name", field.ErrorTypeNotFound, ""},
		// Probes and hooks.
		{"a probe without a handler is refused", main(func(c *corev1.Container) { c.LivenessProbe.HTTPGet = nil }), "spec.containers[0].livenessProbe", field.ErrorTypeRequired, "handler"},
		{"a probe with two handlers is refused", main(func(c *corev1.Container) {
			c.ReadinessProbe.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}
		}), "spec.containers[0].readinessProbe", field.ErrorTypeForbidden, "more than 1"},
		{"a negative probe period is refused", main(func(c *corev1.Container) { c.ReadinessProbe.PeriodSeconds = -1 }), "spec.containers[0].readinessProbe.periodSeconds", field.ErrorTypeInvalid, ""},
		{"a negative failure threshold is refused", main(func(c *corev1.Container) { c.StartupProbe.FailureThreshold = -3 }), "spec.containers[0].startupProbe.failureThreshold", field.ErrorTypeInvalid, ""},
		{"a liveness probe needs successThreshold 1", main(func(c *corev1.Container) { c.LivenessProbe.SuccessThreshold = 2 }), "spec.containers[0].livenessProbe.successThreshold", field.ErrorTypeInvalid, "must be 1"},
		{"a startup probe needs successThreshold 1", main(func(c *corev1.Container) { c.StartupProbe.SuccessThreshold = 3 }), "spec.containers[0].startupProbe.successThreshold", field.ErrorTypeInvalid, "must be 1"},
		{"a probe port out of range is refused", main(func(c *corev1.Container) { c.LivenessProbe.HTTPGet.Port = intstr.FromInt32(0) }), "spec.containers[0].livenessProbe.httpGet.port", field.ErrorTypeInvalid, ""},
		{"an exec probe without a command is refused", main(func(c *corev1.Container) {
			c.LivenessProbe.HTTPGet, c.LivenessProbe.Exec = nil, &corev1.ExecAction{}
		}), "spec.containers[0].livenessProbe.exec.command", field.ErrorTypeRequired, ""},
		{"a readiness probe may not set a grace period", main(func(c *corev1.Container) { c.ReadinessProbe.TerminationGracePeriodSeconds = ptr.To[int64](5) }), "spec.containers[0].readinessProbe.terminationGracePeriodSeconds", field.ErrorTypeInvalid, ""},
		{"a regular init container may not have probes", func(p *corev1.Pod) {
			p.Spec.InitContainers[0].ReadinessProbe = p.Spec.Containers[0].ReadinessProbe
		}, "spec.initContainers[0].readinessProbe", field.ErrorTypeForbidden, "restartPolicy=Always"},
		{"a hook with a negative sleep is refused", main(func(c *corev1.Container) { c.Lifecycle.PreStop.Sleep.Seconds = -1 }), "spec.containers[0].lifecycle.preStop.sleep.seconds", field.ErrorTypeInvalid, ""},
		{"a hook without a handler is refused", main(func(c *corev1.Container) { c.Lifecycle.PostStart = &corev1.LifecycleHandler{} }), "spec.containers[0].lifecycle.postStart", field.ErrorTypeRequired, "handler"},
		// Resources.
		{"a request above its limit is refused", main(func(c *corev1.Container) { c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("1Gi") }), "spec.containers[0].resources.requests[memory]", field.ErrorTypeInvalid, "less than or equal to memory limit"},
		{"a negative limit is refused", main(func(c *corev1.Container) { c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("-1") }), "spec.containers[0].resources.limits[cpu]", field.ErrorTypeInvalid, "greater than or equal to 0"},
		{"an unqualified unknown resource is refused", main(func(c *corev1.Container) { c.Resources.Limits["gpu"] = resource.MustParse("1") }), "spec.containers[0].resources.limits[gpu]", field.ErrorTypeInvalid, "standard resource"},
		{"an extended resource request without a limit is refused", main(func(c *corev1.Container) { c.Resources.Requests["example.com/gpu"] = resource.MustParse("1") }), "spec.containers[0].resources.limits", field.ErrorTypeForbidden, "example.com/gpu"},
		{"a fractional extended resource is refused", main(func(c *corev1.Container) { c.Resources.Limits["example.com/gpu"] = resource.MustParse("500m") }), "spec.containers[0].resources.limits[example.com/gpu]", field.ErrorTypeInvalid, "integer"},
		// Volumes.
		{"two volumes with one name are duplicates", func(p *corev1.Pod) { p.Spec.Volumes[1].Name = "data" }, "spec.volumes[1].name", field.ErrorTypeDuplicate, ""},
		{"a volume name that is not a DNS label is refused", func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "My_Vol", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}, "spec.volumes[2].name", field.ErrorTypeInvalid, ""},
		{"a volume without a source is refused", func(p *corev1.Pod) { p.Spec.Volumes[0].EmptyDir = nil }, "spec.volumes[0]", field.ErrorTypeRequired, "volume type"},
		{"a volume with two sources is refused", func(p *corev1.Pod) { p.Spec.Volumes[0].HostPath = &corev1.HostPathVolumeSource{Path: "/x"} }, "spec.volumes[0]", field.ErrorTypeForbidden, "more than 1 volume type"},
		{"a hostPath without a path is refused", func(p *corev1.Pod) {
			p.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{}}
		}, "spec.volumes[0].hostPath.path", field.ErrorTypeRequired, ""},
		{"a configMap item path with '..' is refused", func(p *corev1.Pod) { p.Spec.Volumes[1].ConfigMap.Items[0].Path = "../x" }, "spec.volumes[1].configMap.items[0].path", field.ErrorTypeInvalid, "'..'"},
		{"a file mode above 0777 is refused", func(p *corev1.Pod) { p.Spec.Volumes[1].ConfigMap.DefaultMode = ptr.To[int32](0o1777) }, "spec.volumes[1].configMap.defaultMode", field.ErrorTypeInvalid, ""},
		{"a secret volume without a name is refused", func(p *corev1.Pod) {
			p.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}
		}, "spec.volumes[0].secret.secretName", field.ErrorTypeRequired, ""},
		// Security contexts.
		{"a negative pod runAsUser is refused", func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsUser = ptr.To[int64](-1) }, "spec.securityContext.runAsUser", field.ErrorTypeInvalid, "between 0 and 2147483647"},
		{"a negative fsGroup is refused", func(p *corev1.Pod) { p.Spec.SecurityContext.FSGroup = ptr.To[int64](-5) }, "spec.securityContext.fsGroup", field.ErrorTypeInvalid, ""},
		{"a negative supplemental group is refused", func(p *corev1.Pod) { p.Spec.SecurityContext.SupplementalGroups = []int64{1, -1} }, "spec.securityContext.supplementalGroups[1]", field.ErrorTypeInvalid, ""},
		{"a bad sysctl name is refused", func(p *corev1.Pod) { p.Spec.SecurityContext.Sysctls[0].Name = "net..x" }, "spec.securityContext.sysctls[0].name", field.ErrorTypeInvalid, ""},
		{"a negative container runAsGroup is refused", main(func(c *corev1.Container) { c.SecurityContext.RunAsGroup = ptr.To[int64](-2) }), "spec.containers[0].securityContext.runAsGroup", field.ErrorTypeInvalid, ""},
		{"privileged without privilege escalation is refused", main(func(c *corev1.Container) { c.SecurityContext.Privileged = ptr.To(true) }), "spec.containers[0].securityContext", field.ErrorTypeInvalid, "privileged"},
		{"a Localhost seccomp profile needs its file", func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}
		}, "spec.securityContext.seccompProfile.localhostProfile", field.ErrorTypeRequired, ""},
		// Pod-level policies.
		{"a negative grace period is refused", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](-1) }, "spec.terminationGracePeriodSeconds", field.ErrorTypeInvalid, "greater than or equal to 0"},
		{"activeDeadlineSeconds 0 is refused", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) }, "spec.activeDeadlineSeconds", field.ErrorTypeInvalid, "between 1 and"},
		{"an empty restartPolicy is required", func(p *corev1.Pod) { p.Spec.RestartPolicy = "" }, "spec.restartPolicy", field.ErrorTypeRequired, ""},
		{"an unknown restartPolicy is not supported", func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, "spec.restartPolicy", field.ErrorTypeNotSupported, ""},
		{"an unknown dnsPolicy is not supported", func(p *corev1.Pod) { p.Spec.DNSPolicy = "Google" }, "spec.dnsPolicy", field.ErrorTypeNotSupported, ""},
		{"dnsPolicy None needs a dnsConfig", func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSNone }, "spec.dnsConfig", field.ErrorTypeRequired, "None"},
		{"four nameservers are too many", func(p *corev1.Pod) {
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8", "9.9.9.9", "1.0.0.1"}}
		}, "spec.dnsConfig.nameservers", field.ErrorTypeTooMany, ""},
		{"a nameserver that is not an IP is refused", func(p *corev1.Pod) { p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"dns.local"}} }, "spec.dnsConfig.nameservers[0]", field.ErrorTypeInvalid, ""},
		{"a hostname that is not a DNS label is refused", func(p *corev1.Pod) { p.Spec.Hostname = "web.local" }, "spec.hostname", field.ErrorTypeInvalid, ""},
		{"a shared process namespace with the host's PID namespace is refused", func(p *corev1.Pod) {
			p.Spec.HostPID, p.Spec.ShareProcessNamespace = true, ptr.To(true)
		}, "spec.shareProcessNamespace", field.ErrorTypeInvalid, "HostPID"},
		{"ephemeral containers cannot be set on create", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
		}, "spec.ephemeralContainers", field.ErrorTypeForbidden, "on create"},
		{"a toleration with Exists and a value is refused", func(p *corev1.Pod) { p.Spec.Tolerations[0].Value = "x" }, "spec.tolerations[0].operator", field.ErrorTypeInvalid, "Exists"},
		{"a host alias that is not an IP is refused", func(p *corev1.Pod) { p.Spec.HostAliases[0].IP = "db" }, "spec.hostAliases[0].ip", field.ErrorTypeInvalid, ""},
		{"an invalid nodeSelector label is refused", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"a b": "c"} }, "spec.nodeSelector", field.ErrorTypeInvalid, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := validPod()
			tc.mutate(pod)
			errs := Validate(pod)
			for _, e := range errs {
				if e.Field == tc.field && e.Type == tc.typ && strings.Contains(e.Error(), tc.detail) {
					if !strings.HasPrefix(e.Error(), tc.field+": ") {
						t.Errorf("error %q does not start with its field %q", e.Error(), tc.field)
					}
					if len(e.Error()) > 1024 {
						t.Errorf("error is %d bytes long; a bad value must be cut short", len(e.Error()))
					}
					return
				}
			}
			t.Errorf("Validate() = %v, want a %s error on %s containing %q", errs, tc.typ, tc.field, tc.detail)
		})
	}
}
