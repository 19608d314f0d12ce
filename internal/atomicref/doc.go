// Package atomicref holds one value of an interface type that is replaced
// and read concurrently: a late-bound dependency (a pressure source, a
// ready gate) or the far end of a dependency cycle that the composition
// root closes once the application is built.
//
// A Ref's zero value is empty and ready to use. It is safe for concurrent
// use.
package atomicref
