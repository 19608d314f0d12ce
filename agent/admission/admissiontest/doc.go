// Package admissiontest is the conformance suite of admission.Handler: the
// contract every handler in the agent's chain must keep, checked on pods
// the caller says it admits or refuses.
//
// The suite checks, for every case: the verdict is the one expected; a
// refusal has a Reason (one CamelCase word, which becomes the pod's
// status.reason) and a Message; the handler mutates neither the pod nor
// the other pods it is shown; the same attributes get the same verdict a
// second time; and it does not panic on a pod with no labels, annotations,
// security context or containers, or with no other pods.
package admissiontest
