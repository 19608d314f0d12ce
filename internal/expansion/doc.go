// Package expansion expands $(VAR) references the way the kubelet expands a
// container's command, args and env values; the CRI manager and the prober
// share it.
package expansion
