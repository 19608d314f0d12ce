// Command eviction-ranking runs nodekit's default agent with one policy
// swapped: CostRanker replaces the kubelet's eviction order. A pod's owner
// says what evicting it costs with the annotation
// eviction.example.nodekit.io/cost (an integer, DefaultCost when absent
// or invalid); under pressure the cheapest pod goes first, and pods of
// equal cost keep the kubelet's order among themselves. Everything else
// (signals, thresholds, reclaim, one eviction per pass, the Evicted
// status) is nodekit's eviction manager.
//
//	eviction-ranking --manifests DIR --runtime-endpoint unix:///run/containerd/containerd.sock
package main
