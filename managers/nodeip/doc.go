// Package nodeip is the one place the node's IP addresses come from.
//
// The kubelet reports the same addresses everywhere: the Node's InternalIP
// addresses, every pod's status.hostIP(s), the status.podIP(s) of
// hostNetwork pods and the downward API's status.hostIP(s) all come from
// the node's addresses. nodekit's node status reporter, the agent's pod
// status, the container environment and the runtime manager read them from
// one Source, so they agree.
//
// Detector is the default Source. With Config.NodeIPs set (--node-ip) it
// returns them; otherwise it detects the address as the kubelet does
// without a cloud provider: the hostname when it is an IP address, else the
// first valid address the node name resolves to (IPv4 preferred; valid
// means neither loopback, multicast, link-local nor unspecified, and
// assigned to one of the host's interfaces), else the address of the
// interface of the default route (k8s.io/apimachinery's
// ChooseHostInterface). Detection runs on the first call, not in the
// constructor; a result is kept for good, a failure for
// Config.RetryInterval, so the pod sync path never waits on DNS more than
// once per interval.
//
// Static is a fixed Source for tests and embedders that know their
// addresses. An embedder with its own view (a VM, a sandbox) implements
// Source.
//
// Concurrency: Detector and Static are safe for concurrent use; concurrent
// first calls share one detection.
package nodeip
