// Package runtimetest is the conformance suite for container runtimes
// (runtime.Runtime): it drives a runtime the way the agent does and checks
// what the agent relies on:
//
//   - Type, Version and Status answer, and a pod the runtime does not know
//     has an empty status, not an error;
//   - SyncPod runs a pod: one ready sandbox, every container running, IDs
//     qualified with the runtime's Type, names and times filled in; a second
//     SyncPod with the new status starts nothing more; GetPods lists the pod
//     and hands out objects the caller owns;
//   - exit codes and finish times of exited containers are reported, and a
//     restartPolicy Never pod is not restarted;
//   - an exited container of a restartPolicy Always pod is restarted in the
//     same sandbox, its restart count one more, the dead copy still listed;
//   - a changed container spec replaces the container;
//   - KillPod stops every container and the sandbox, is idempotent, works
//     for a pod known only to the runtime (nil spec), and a killed pod is
//     listed by GetPods(all=true) only;
//   - when the runtime is a runtime.GarbageCollector, garbage collection
//     removes every object of a removed pod and leaves the others alone.
//
// # Use
//
// Suite runs every case on a Backend, each as a subtest with a runtime of
// its own (Backend.Open). SimBackend is the default runtime (runtime/cri)
// over the simulated CRI runtime with a fake clock; CRIBackend is
// runtime/cri over a real CRI endpoint such as containerd; an embedder's
// own runtime is a Backend whose Open returns it. Check runs the same cases
// and returns the violations instead of failing, which is how the suite's
// own tests show it fails broken runtimes.
//
// Test pods are scripted both ways: the simulated runtime reads the
// sim.nodekit.io annotations, a real one runs the containers' command
// ("sh -c ..." with sleep and a TERM trap), so Backend.Image must have sh
// and sleep on a real runtime.
//
// # Concurrency
//
// With a fake clock the suite steps it itself and waits until every
// goroutine of the process is blocked before stepping again, so it must not
// run in parallel with other tests of the same binary.
package runtimetest
