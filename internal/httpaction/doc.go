// Package httpaction builds the GET request of a pod's httpGet action, one
// way for HTTP probes (managers/prober) and httpGet lifecycle hooks
// (runtime/cri), as the kubelet builds both with one function. The callers
// resolve the port (their rules differ) and send the request.
package httpaction
