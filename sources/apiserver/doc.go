// Package apiserver is the API server pod source: the pods the control plane
// bound to this node, as the kubelet's config/apiserver.go reads them.
//
// # Data flow
//
// [Source.Run] runs a client-go Reflector that lists and watches pods in
// all namespaces with the field selector spec.nodeName=<Config.NodeName>:
// the only pods a node's credentials may read under the Node authorizer, so
// the source never lists without it. The reflector fills a small store; the
// store also drops pods bound to other nodes, for servers (and fakes) that
// ignore the selector. Once the initial list has synced, Run sends the whole
// store as one snapshot to the sources.Mux, which diffs snapshots into ADD,
// UPDATE, DELETE, REMOVE and RECONCILE. After that, every change starts a
// Config.Debounce window (50ms) at whose end one snapshot carries all the
// changes of the burst.
//
// Mirror pods (annotation kubernetes.io/config.mirror) are part of the
// snapshot like any other pod: the agent tells them apart.
//
// When the API server goes away the reflector retries on its own with
// backoff and the source sends nothing: the last snapshot stands and the
// agent keeps running its pods. When the server comes back, the relist
// yields the same pods; the store notices that nothing changed (same UIDs
// and resource versions) and sends nothing, so nothing restarts. Pods
// deleted or changed meanwhile show up in the next snapshot.
//
// # Checkpoint
//
// With Config.CheckpointDir set (nodekit sets ROOT/pod-checkpoints unless
// the pod checkpoint is turned off), every snapshot is saved before it is
// sent: one <uid>.json file per pod, written to a temporary file, synced
// and renamed, so a crash or power loss leaves the old or the new version;
// pods gone from the API server lose their file; mirror pods are never
// saved. If the first list has not synced within Config.OfflineAfter (10s)
// when Run starts (a node rebooted while its control plane is away), Run
// sends the checkpointed pods as its first snapshot and [Source.Offline]
// reports true: the agent runs those pods, recreating the sandboxes a
// reboot removed, and the Mux counts the source as seen, so housekeeping
// runs without killing them. Without a checkpoint directory (never
// listed) nothing is sent, as without the feature. When the list syncs, its
// snapshot replaces the checkpointed one; the Mux matches pods by UID, so
// a pod still bound to the node is at most an UPDATE or a RECONCILE (no
// restart) and a pod deleted meanwhile is a REMOVE (terminated).
//
// # Concurrency
//
// Run owns two goroutines, its own and the reflector's, and waits for the
// reflector before it returns. Each snapshot holds deep copies: the Mux
// takes ownership of what it receives and stamps annotations on it, so the
// store's pods are never shared. Run blocks on sending a snapshot until the
// Mux takes it or ctx ends; changes made meanwhile go into the next one.
//
// # Extending
//
// To read pods from elsewhere, write another sources.Source and add it to
// the "sources" group. To filter or rewrite the API server's pods, wrap this
// Source's Run and rewrite the snapshots.
package apiserver
