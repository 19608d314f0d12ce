// Package pleg is the pod lifecycle event generator: it watches the container
// runtime, keeps the pod status Cache current and tells the agent which pods
// changed.
//
// # Data flow
//
//	runtime.GetPods / GetPodStatus --> Generic.Relist --> Cache.Set, Cache.UpdateTime
//	                                                  \-> Watch() events --> agent sync loop
//	pod workers --> Cache.GetNewerThan(uid, lastSyncTime)
//
// Generic relists every RelistPeriod (1s by default): it lists every pod with
// GetPods(all=true), compares each container's and sandbox's state with the
// previous relist and derives events the way the kubelet does:
//
//	old state          new state         events
//	any other          running           ContainerStarted
//	any other          exited            ContainerDied
//	any other          created/unknown   ContainerChanged (not sent, as in the kubelet)
//	exited             gone              ContainerRemoved
//	running/unknown    gone              ContainerDied, ContainerRemoved
//
// Only pods with an event, pods never inspected and pods whose last
// inspection failed are inspected with GetPodStatus; the status (or the
// error, retried on the next relist) is written to the Cache stamped with the
// time taken just before that call. A pod that vanished from the list has
// its entry deleted, so the Cache reports an empty status for it, as the
// kubelet does. A pod's events are sent after its Cache update, so whoever
// handles an event reads the new status.
//
// # The Cache contract
//
// A pod worker that synced a pod at time T calls GetNewerThan(ctx, uid, T)
// before its next sync and gets a status observed after T. There are two ways
// the Cache can vouch for that: the pod's entry was written with a timestamp
// after T, or the global timestamp is after T. Every relist ends with
// UpdateTime(t0), t0 being the time taken before it listed the runtime, once
// every changed pod has been written: a pod that was not inspected did not
// change since t0, so its entry (or the empty status) is current as of t0.
// That is what wakes the workers of unchanged pods; a PLEG that inspects only
// changed pods must advance the global timestamp, or those workers would
// wait forever. The Cache never goes back in time: an older Set is ignored
// and UpdateTime never moves backwards.
//
// # Concurrency
//
// Cache methods are safe for concurrent use. The Cache keeps the status
// pointers it is given: writers must not mutate a status after Set and
// readers must not mutate one from Get or GetNewerThan. Generic's Relist
// calls are serialized; Healthy, Watch and DroppedEvents may be called at any
// time. Run starts no goroutines: it relists in its caller's goroutine.
//
// # Extending
//
// Another PLEG (for instance one driven by CRI container events) implements
// Interface and writes to the same *Cache with Set and UpdateTime under the
// contract above; replace the default with fx.Decorate or fx.Replace on
// Interface. Embedders reading statuses should depend on the Cache's methods
// through a small interface of their own (podworkers.StatusCache).
package pleg
