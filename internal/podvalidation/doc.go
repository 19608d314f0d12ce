// Package podvalidation checks a pod as the API server checks a pod create,
// for pods that never went through an API server: static pods from the
// manifest directory (sources/file) and, later, pods from a manifest URL.
//
// # What it checks
//
// [Validate] runs apimachinery's metadata validation (name, namespace,
// labels, annotations with the API server's 256 KiB total limit) and the
// pod-spec rules of the API server (k8s.io/kubernetes/pkg/apis/core/validation,
// read for behaviour at v1.37; that package is not imported) that matter to a
// node agent: containers and init containers (names, images, ports, host
// ports, environment, volume mounts, probes, lifecycle hooks, resources,
// security contexts, restart policies), volumes, the pod security context,
// grace periods and deadlines, restart and DNS policies, host aliases and
// tolerations. Each problem is one field.Error naming the field's path (as
// "spec.containers[0].ports[1].containerPort") and the rule; every problem
// is reported, not only the first.
//
// The pod is checked as the agent will run it: call Validate after the
// source applied its defaults (the API server validates after defaulting
// too), so that, say, an empty restartPolicy is an error here.
//
// Where nodekit deliberately differs: a negative
// terminationGracePeriodSeconds, which the API server accepts on create (and
// treats as 1), is refused, naming the field, because the agent never
// silently changes what a manifest says; a restartPolicyRules action
// RestartAllContainers (beta since v1.36) is refused because the agent does
// not run it (action Restart, ContainerRestartRules, is run).
//
// Beyond the API server's rules, for pods that no API server bounded:
// metadata.uid must be a single path element (ValidateIdentity, which the
// sources.Mux also applies to the UID, name and namespace of every source's
// pods, as the agent names directories after them), and the pod must be
// within count limits (limits.go: containers, volumes, and the env vars,
// command and args, ports and volume mounts of all containers together),
// checked first so that a pod far beyond one gives one error, not one per
// item. [StaticPodReferences] is the kubelet's refusal of static pods that
// reference API objects; the sources call it beside Validate.
//
// spec.nodeName is not checked: the source sets it to the agent's node
// name, a setting of the agent rather than of the manifest.
//
// Rules for fields the agent does not run (volume sources other than the
// common ones, Windows options, scheduling gates) are not repeated here; the
// runtime refuses such fields with a reason naming them.
//
// # Concurrency
//
// Validate is a pure function, safe for concurrent use; it never changes the
// pod.
package podvalidation
