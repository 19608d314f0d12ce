// Package sourcetest is the conformance suite of sources.Source: the
// contract the sources.Mux relies on, checked on any source an embedder
// writes (pods from an HTTP endpoint, a message queue...) through a Fixture
// that sets what the source's backing store holds.
//
// The suite checks that Run sends a first snapshot as soon as the store
// has been read, an empty one for an empty store; that every change of the
// store's pods reaches the updates channel as a snapshot of exactly those
// pods (by namespace and name); that no two snapshots share a *corev1.Pod
// (the Mux owns what it receives and may mutate it); and that Run returns
// nil soon after its context ends.
package sourcetest
