// Command clusterbench joins many simulated nodes to one real
// kube-apiserver and measures what they cost: nodekit agents on the
// simulated runtime (runtime/sim), each a whole agent with its own client
// certificate, clientset and watches, beside kwok (sigs.k8s.io/kwok), which
// only patches the statuses of fake Nodes and their pods. For each it
// creates the nodes, binds P pods to every node (spec.nodeName, no
// scheduler), waits for every node Ready and every pod Running, deletes the
// pods and waits for them to be gone, and prints nodes Ready per second,
// pods Running per second, API requests per pod, the agent process's CPU
// and peak RSS per node, time to all Running and teardown time, with
// nodekit's figures as ratios of kwok's.
//
// The nodekit agents run in a child process of their own (clusterbench
// agents ...), so that the process measured holds the agents and nothing
// of the benchmark, as the kwok process holds kwok alone.
//
// docs/cluster-scale.md keeps the figures and the command.
package main
