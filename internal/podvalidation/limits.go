package podvalidation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Count limits on a pod that never went through an API server. The API
// server has no limit on these lists: it bounds the whole object instead
// (a 3 MiB request body, etcd's 1.5 MiB value), while a manifest may have
// 10 MiB, and a short list item costs the agent far more than its bytes
// (a static pod with 300,000 env vars took 1.3 GiB, about 4.5 KiB per
// variable, in the copies of the pod and of its container configs). The
// limits are pod-wide and generous, far above what real pods use, so that
// they only stop a manifest that would exhaust the node.
const (
	// maxContainers bounds initContainers and containers together: pods
	// with sidecars use a handful.
	maxContainers = 100
	// maxVolumes bounds spec.volumes.
	maxVolumes = 1000
	// maxEnvVars bounds the env and envFrom entries of all containers
	// together (at the rate above, 10,000 cost about 45 MiB).
	maxEnvVars = 10000
	// maxArgs bounds the command and args strings of all containers
	// together; a command line longer than that is a script's job.
	maxArgs = 10000
	// maxPorts bounds the ports of all containers together.
	maxPorts = 10000
	// maxVolumeMounts bounds the volumeMounts and volumeDevices of all
	// containers together: one per volume in each of the 10 containers of
	// a large pod.
	maxVolumeMounts = 10000
)

// countedList is one per-container list that a limit bounds pod-wide.
type countedList struct {
	what  string
	child string
	max   int
	count func(c *corev1.Container) int
}

var countedLists = []countedList{
	{"env and envFrom entries", "env", maxEnvVars, func(c *corev1.Container) int { return len(c.Env) + len(c.EnvFrom) }},
	{"command and args strings", "args", maxArgs, func(c *corev1.Container) int { return len(c.Command) + len(c.Args) }},
	{"ports", "ports", maxPorts, func(c *corev1.Container) int { return len(c.Ports) }},
	{"volumeMounts and volumeDevices", "volumeMounts", maxVolumeMounts,
		func(c *corev1.Container) int { return len(c.VolumeMounts) + len(c.VolumeDevices) }},
}

// validateCounts checks the count limits. A pod-wide limit is reported at
// the container whose list crosses it.
func validateCounts(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := len(spec.InitContainers) + len(spec.Containers); n > maxContainers {
		errs = append(errs, field.Forbidden(fld.Child("containers"), fmt.Sprintf(
			"the pod has %d initContainers and containers in all, more than the limit of %d", n, maxContainers)))
	}
	if n := len(spec.Volumes); n > maxVolumes {
		errs = append(errs, field.Forbidden(fld.Child("volumes"), fmt.Sprintf(
			"the pod has %d volumes, more than the limit of %d", n, maxVolumes)))
	}
	for _, l := range countedLists {
		total, at := 0, (*field.Path)(nil)
		visit := func(cs []corev1.Container, path *field.Path) {
			for i := range cs {
				total += l.count(&cs[i])
				if total > l.max && at == nil {
					at = path.Index(i).Child(l.child)
				}
			}
		}
		visit(spec.InitContainers, fld.Child("initContainers"))
		visit(spec.Containers, fld.Child("containers"))
		if at != nil {
			errs = append(errs, field.Forbidden(at, fmt.Sprintf(
				"the pod's containers have %d %s in all, more than the limit of %d", total, l.what, l.max)))
		}
	}
	return errs
}
