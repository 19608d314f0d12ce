// Command priority-start runs nodekit's default agent with its start gate
// swapped: new pods are admitted and started highest spec.priority first
// (then oldest first), with at most --max-starting pods starting at once.
// It is the whole swap.
//
//	priority-start --max-starting 2 --manifests DIR --runtime sim
package main
