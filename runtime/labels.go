package runtime

// Labels and annotations that the kubelet puts on sandboxes and containers, so
// that crictl and other tools read nodekit's containers as they read the
// kubelet's, and an agent restart rebuilds every status from the runtime.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"
	// LabelInstance carries the agent's instance ID; an agent adopts, kills
	// and garbage-collects only sandboxes and containers that carry its own.
	LabelInstance = "nodekit.io/instance"

	AnnotationContainerHash            = "io.kubernetes.container.hash"
	AnnotationContainerRestartCount    = "io.kubernetes.container.restartCount"
	AnnotationTerminationMessagePath   = "io.kubernetes.container.terminationMessagePath"
	AnnotationTerminationMessagePolicy = "io.kubernetes.container.terminationMessagePolicy"
	AnnotationTerminationGracePeriod   = "io.kubernetes.pod.terminationGracePeriod"
	AnnotationContainerPorts           = "io.kubernetes.container.ports"
	AnnotationPodDeletionGracePeriod   = "io.kubernetes.pod.deletionGracePeriod"
)
