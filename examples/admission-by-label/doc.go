// Command admission-by-label runs nodekit's default agent with one admission
// handler added to the agent's chain: a pod carrying the label --label is
// refused (Failed, reason LabelRefused, a Warning event) before it is
// counted or started, while every other pod runs. It is the whole swap.
//
//	admission-by-label --label example.nodekit.io/deny --manifests DIR --runtime sim
package main
