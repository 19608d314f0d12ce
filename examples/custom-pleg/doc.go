// Command custom-pleg runs nodekit's default agent with one piece swapped:
// its own PLEG (SnapshotPLEG, in pleg.go) replaces the generic one through
// fx.Decorate. Everything else (sources, pod workers, CRI runtime, server) is
// the default, and the default PLEG is never started. Its tests run
// nodekit's PLEG conformance suite (pleg/plegtest) on SnapshotPLEG, on the
// simulated runtime and, with -tags e2e, on containerd.
//
//	custom-pleg --manifests DIR --runtime-endpoint unix:///run/containerd/containerd.sock
package main
