// Package plegtest is the conformance suite for PLEGs (pleg.Interface): it
// runs a PLEG against a real nodekit CRI runtime manager on a container
// runtime (the simulated one with a fake clock, or a real one such as
// containerd) and checks the contract between a PLEG, the pod status Cache
// and the pod workers that the pleg package documents:
//
//   - no event lost: every change the runtime makes to a pod (a container
//     started, exited, killed from outside, removed; a pod removed) reaches
//     the agent as an event naming the pod (with Options.KubeletEvents, as
//     the kubelet's ContainerStarted, ContainerDied and ContainerRemoved
//     with the container's ID, each once), and the Cache holds the change
//     by the time the event is received;
//   - no duplicate container: a status never lists a container or sandbox
//     twice, and a pod worker that syncs only on statuses newer than its
//     previous sync never starts a second copy of a container;
//   - the Cache never goes back in time: a container's state never moves
//     backwards and a removed container never comes back;
//   - a worker waiting for a status newer than its last sync is woken
//     (within Options.Within), and the status it gets shows everything the
//     runtime did before that sync ended: the cache did not vouch for a
//     time too early;
//   - a status stamped in the future (a writer whose clock runs ahead)
//     does not freeze the pod's entry: later changes still reach the cache
//     and a worker waiting for a status newer than now gets them.
//
// # Use
//
// Suite runs every case on the simulated runtime with a fake clock; SuiteOn
// runs them on any Backend, for instance CRIBackend for a containerd
// endpoint in an end-to-end test, or a Backend whose Runtime returns any
// runtime.Runtime with an Outside to make changes behind its back. The
// Factory builds the PLEG under test from an Env; the suite runs it, drives
// pods through the runtime's SyncPod and KillPod (and Outside, by default
// the raw CRI service, for changes made from outside), and stops it at the
// end of each case.
//
// # Concurrency
//
// With a fake clock the suite moves time itself and waits until every
// goroutine of the process is blocked before it moves it again, so it must
// not run in parallel with other tests of the same binary. Cases run one
// after the other.
//
// # Extending
//
// To check a new property, add a case to cases() (suite.go), written only
// with the harness's methods (pods, CRI calls from outside, waits for
// events and statuses), so that it runs on every backend; and add to
// suite_test.go a PLEG with the bug the case looks for, to show the case
// can fail.
package plegtest
