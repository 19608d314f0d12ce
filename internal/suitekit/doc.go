// Package suitekit holds what the conformance suites an embedder runs
// against their own piece (pleg/plegtest, runtime/runtimetest) share: the
// connection to a real CRI runtime a case opens, and the scripted test
// container that behaves alike on the simulated runtime (annotations) and
// on a real one (a shell that handles TERM).
package suitekit
