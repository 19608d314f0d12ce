// Package objectcache keeps, on disk, the ConfigMaps, Secrets and
// service-account tokens the volumes and environment of each checkpointed
// API pod were last made of, so that after a reboot with the API server
// away (the API source serving its pod checkpoint) the pods can start
// again: their secret, projected (token included) and configMap volumes,
// which a reboot empties (tmpfs) or which are rebuilt from the API, and
// their env valueFrom/envFrom references. KubeEdge's edge node keeps such
// a local store of the objects its pods reference; the kubelet keeps none
// and the pods wait in ContainerCreating until the API server answers.
//
// # Layout
//
// One directory per pod, <Dir>/<uid> (0700), one file per object,
// <kind>~<name>.json (0600), holding the object trimmed to what the pod
// uses (a ConfigMap's data, a Secret's type and data, a token request's
// spec and status) and the time it was saved. Every file is written
// atomically (internal/atomicfile): a crash leaves the old or the new copy.
//
// # Which pods
//
// A copy is saved only for a pod that is in the pod checkpoint (its
// <CheckpointDir>/<uid>.json exists), so static pods and pods of an agent
// with the checkpoint off never leave secrets on disk. [Store.Forget]
// removes a pod's copies (its volumes were torn down); [Store.Prune]
// removes those of every pod that left the checkpoint.
//
// # Concurrency
//
// All methods are safe for concurrent use. The consumers (managers/volumes
// and managers/env) decide when a copy is used: only while Offline reports
// true and the object cannot be fetched.
package objectcache
