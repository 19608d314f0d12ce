// Package pleg is the pod lifecycle event generator: it watches the container
// runtime, keeps the pod status Cache current and tells the agent which pods
// changed. Two implementations are provided, picked by Config.Kind: Generic,
// which relists the runtime every second as the kubelet does, and Evented,
// which follows the runtime's CRI container event stream.
//
// # Data flow
//
//	Generic: runtime.GetPods / GetPodStatus --> Relist --> Cache.Set, Cache.UpdateTime
//	                                                   \-> Watch() events --> agent sync loop
//	Evented: CRI GetContainerEvents --> event's pod status --> Cache.Set --> Watch() events
//	         relists (reconcile, for waiting workers, fallback) as Generic's
//	pod workers --> Cache.GetNewerThan(uid, lastSyncTime)
//
// # The Cache contract
//
// An entry's timestamp (and the global timestamp) is a promise: the status
// shows everything the runtime had done to the pod at that time. A PLEG
// writes with Set(uid, status, err, t) only a status it observed at or
// after t, and calls UpdateTime(t) only when every pod's entry (or, for a
// pod without one, the empty status) is current as of t. The timestamp may
// be earlier than the observation, never later: a later one lets a worker
// act on a status that misses changes, which is how the kubelet's evented
// PLEG started duplicate containers.
//
// A pod worker whose previous sync ended at T calls GetNewerThan(ctx, uid,
// T) and gets a status the cache vouches for after T: the pod's entry is
// newer than T, or the global timestamp is. So a sync always sees what the
// previous one did. The Cache never goes back in time: an older Set is
// ignored and UpdateTime never moves backwards. Every PLEG must eventually
// wake such a worker, either by writing the pod's entry or by advancing the
// global timestamp; a PLEG that writes only changed pods must advance the
// global timestamp, or workers of unchanged pods would wait forever. A
// pod's events are sent after its Cache update, so whoever handles an event
// reads the new status. Events name containers and sandboxes by runtime ID
// (ContainerStarted, ContainerDied, ContainerRemoved), each transition once;
// a status lists each container once. pleg/plegtest checks all of this for
// any PLEG.
//
// # Generic
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
// error, retried on the next relist) is stamped with the time taken just
// before that call. A pod that vanished from the list has its entry
// deleted, so the Cache reports an empty status for it, as the kubelet
// does. Every relist ends with UpdateTime(t0), t0 being the time taken
// before it listed the runtime: a pod that was not inspected did not change
// since t0.
//
// # Evented
//
// Evented keeps the contract without polling:
//
//   - An event's status. With an EventDecoder (runtime/cri's Manager), an
//     event becomes the status of its sandbox and that sandbox's containers,
//     converted as GetPodStatus converts them, and is merged into the cached
//     status: an object keeps the later of its two states (containers never
//     go back), objects of other sandboxes stay as cached, and an object is
//     dropped only by its CONTAINER_DELETED event. Without a decoder each
//     event makes the PLEG inspect the pod with GetPodStatus: correct for any
//     Runtime, at four or more CRI calls per event.
//   - Its timestamp. The entry is stamped with the time of the change the
//     event reports, as the runtime recorded it on the object (CreatedAt,
//     StartedAt, FinishedAt; a sandbox's CreatedAt), bounded by the event's
//     own time and the clock. The runtime builds the snapshot after the
//     change, so the stamp is never later than the observation. The event's
//     CreatedAt is not used: containerd takes it after building the
//     snapshot, so it could claim more than was seen. (The kubelet's evented
//     PLEG first read that nanosecond value as seconds.) Deletions, a
//     sandbox's stop, and a pod with live objects in another sandbox keep the
//     entry's time: the status is updated, nothing more is vouched for.
//   - Late events. An event older than the entry is dropped when it shows
//     nothing the PLEG does not know, else the pod is inspected.
//   - The global timestamp. Only relists advance it, each stamped before it
//     lists the runtime as Generic's are: the initial relist, a resync each
//     time the stream opens (changes made while it was closed), the
//     reconcile relist every ReconcilePeriod (300s), and a relist when pod
//     workers wait on the Cache for a status it cannot vouch for yet (after
//     their own sync, say), WaiterRelistDelay after the first of them starts
//     waiting, so that the waiters of one moment share one relist. The
//     kubelet's evented PLEG instead moved the global timestamp to now every
//     few seconds, vouching for events still in flight.
//   - Missed events. A relist that finds a change the stream, open since
//     before the previous relist, did not report counts it as missed
//     (MissedEvents, nodekit_evented_pleg_missed_events_total) unless its
//     event arrives within 10s; it should stay 0. Either way the relist
//     inspects the pod, so the cache is right.
//   - Stream failures. The stream is reopened with a backoff that doubles
//     from ReconnectBackoff to MaxReconnectBackoff; after FallbackAfter
//     failures in a row the PLEG relists every RelistPeriod (ModeRelisting)
//     until the stream is open again and a resync relist has run
//     (ModeEvents). Mode reports it, and so does nodekit_evented_pleg_mode.
//
// Limits: the PLEG sees what the runtime has recorded. containerd records a
// container's exit when it handles the shim's exit event, with the exit's
// own time as FinishedAt; until then neither PLEG sees the exit. Events are
// filtered by the agent's instance label, so other clients of the runtime
// cost only the decoding of their events.
//
// Metrics: Generic has the kubelet's pleg_relist_duration_seconds,
// pleg_relist_interval_seconds, pleg_discard_events, pleg_last_seen_seconds
// and running_pods; Evented shares them for its relists and adds the
// kubelet's evented_pleg_connection_success_count, _error_count and
// _latency_seconds (from an event's creation in the runtime to the cache),
// and nodekit_evented_pleg_events_total, _missed_events_total,
// _reconnects_total, _inspections_total, _relists_total{reason} and
// _mode{mode}.
//
// # Concurrency
//
// Cache methods are safe for concurrent use. The Cache keeps the status
// pointers it is given: writers must not mutate a status after Set and
// readers must not mutate one from Get or GetNewerThan. Generic's Relist
// calls are serialized and Run starts no goroutine. Evented serializes its
// event handling and relists under one lock; its Run starts one goroutine,
// which reads the stream, and returns after it ended. Healthy, Watch, Mode
// and the counters of both may be called at any time.
//
// # Extending
//
// Another PLEG implements Interface and writes to the same *Cache with Set
// and UpdateTime under the contract above; replace the default with
// fx.Decorate or fx.Replace on Interface, and run pleg/plegtest's Suite on
// it (examples/custom-pleg does). Embedders reading statuses should depend
// on the Cache's methods through a small interface of their own
// (podworkers.StatusCache).
package pleg
