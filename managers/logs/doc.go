// Package logs rotates the running containers' log files, as the kubelet's
// container log manager (pkg/kubelet/logs) does:
// --container-log-max-size (default 10Mi) and --container-log-max-files
// (default 5), checked every 10 s; rotated files other than the newest are
// compressed with gzip, and the runtime is asked to reopen the log
// (ReopenContainerLog) after each rotation. See [Rotator] for the steps.
//
// ARCHITECTURE.md has no package for this: it is a package of its own (not
// part of runtime/cri or server) because it is a subsystem with its own loop
// and policy, which an embedder may replace (say, by an agent that ships logs
// elsewhere) without touching the runtime manager or the server that reads
// the files.
//
// # Place in the data flow
//
// The [Rotator] reads the runtime over CRI (ListContainers for the running
// containers, ContainerStatus for each log path, ReopenContainerLog) and
// works on the files the runtime writes under the agent's root dir. The
// container-log reader of the server (kubectl logs) reads the same files:
// the current one and, for older lines, the rotated ones.
//
// # Extending and replacing
//
// Implement [Manager] and provide it in place of [Module]; nodekit runs the
// Manager it is given.
//
// # Concurrency
//
// [Rotator.Run] blocks until its context ends. A round handles up to
// MaxWorkers containers at once; rounds and [Rotator.Clean] are
// serialised. Clean is not called by the CRI manager's container garbage
// collection yet: rotated files of a removed container go when its pod's
// log directory is removed.
package logs
