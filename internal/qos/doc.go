// Package qos computes a pod's Quality of Service class the way the API
// server and the kubelet do (k8s.io/kubernetes pkg/apis/core/v1/helper/qos),
// so that the class the agent reports in the pod's status and the class the
// runtime manager uses for oom_score_adj and the pod's cgroup always agree.
//
// Only cpu and memory count. A container whose requests and limits are both
// empty is BestEffort; one whose cpu and memory requests equal their
// (non-zero) limits is Guaranteed; anything else is Burstable. The pod is
// the class its containers (init containers included) share, and Burstable
// when they differ. A pod with pod-level resources (spec.resources) takes
// the class of those alone. A missing request counts as equal to its limit,
// as the API server's defaulting makes it.
//
// The functions are pure and safe for concurrent use. Both the agent (the
// status it reports) and runtime/cri (oom_score_adj, the pod cgroup) should
// use it, so that they never disagree; to change the rules, change them
// here.
package qos
