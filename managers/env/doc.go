// Package env computes the environment of a container as the kubelet's
// makeEnvironmentVariables does: the service environment, envFrom
// (configMapRef and secretRef, with prefix and optional), and env (plain
// values with $(VAR) expansion, fieldRef, resourceFieldRef,
// configMapKeyRef and secretKeyRef, with optional).
//
// # Data flow
//
// The runtime manager (runtime/cri) asks a [Builder] for each container's
// environment just before it creates the container; it knows nothing of
// API objects. The Builder reads ConfigMaps and Secrets through an
// objects.Manager and Services through an objects.ServiceLister (both nil
// without an API server), and the node's allocatable resources for the
// default limits that resourceFieldRef reports. A missing configMap,
// secret or key that is not optional is an error naming it; the runtime
// reports it as CreateContainerConfigError and the next sync retries, so
// the container starts once the object or key appears.
//
// # Offline
//
// With Deps.Offline or SetOffline (nodekit provides the store only with
// its object checkpoint, an opt-in, on), the ConfigMaps and Secrets a
// checkpointed pod's env references are kept in the same on-disk store as
// its volumes' (internal/objectcache), and used only while the agent runs
// offline and the API server does not answer: after a reboot with the API
// server away the container starts with the values it had. Each use is
// logged once per pod and object; ForgetOffline drops what was logged of
// gone pods.
//
// # Extending
//
// An embedder replaces the Builder by giving the runtime manager another
// cri.EnvSource.
//
// # Concurrency
//
// A Builder is safe for concurrent use; its only state is what the
// offline copies logged.
package env
