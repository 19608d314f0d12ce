// Package podannotations holds the annotation keys and source names that
// pod sources stamp on their pods (kubernetes.io/config.*), so that the
// packages that read them (podworkers, managers/status) need not import
// package sources. Package sources re-exports them as its Annotation*
// and *Source constants, which is where embedders should take them from.
package podannotations
