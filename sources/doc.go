// Package sources is where the agent learns which pods it should run.
//
// # Data flow
//
// Each [Source] (the static-pod manifest directory in sources/file, a
// manifest URL, the API server) sends full snapshots of its pods. The [Mux]
// runs every source, keeps the last snapshot of each one and diffs every new
// snapshot against it, the way the kubelet's podStorage does in its
// incremental mode: it emits [PodUpdate] values (REMOVE, ADD, UPDATE, DELETE,
// RECONCILE, in that order) on a single channel that the agent's sync loop
// reads. Pods are keyed by UID within their source; sources never see each
// other's pods. A UID belongs to one source at a time: a pod whose UID
// another source already delivered is held back (logged once) and added
// when that source drops the UID, so the agent, which keys pods by UID,
// never gets one UID from two sources (the kubelet delivers both).
//
// The Mux stamps every pod with the annotations [AnnotationSource] and
// [AnnotationSeen] (the time the Mux first saw that UID, kept across
// updates). [AnnotationHash] is the source's business.
//
// # Concurrency
//
// Each source runs in its own goroutine; snapshots are merged one at a time
// by the goroutine that called [Mux.Run], so updates from one snapshot are
// delivered contiguously and in order. [Mux.SeenSource], [Mux.SeenAllSources]
// and [Mux.Sources] are safe for concurrent use. Pods in a PodUpdate are deep
// copies that the receiver owns.
//
// # Extending
//
// A new source implements [Source] (Name and Run) and is added to the
// "sources" fx value group, e.g.
//
//	fx.Provide(fx.Annotate(newMySource, fx.As(new(sources.Source)), fx.ResultTags(`group:"sources"`)))
//
// A source whose Run returns an error is logged and dropped; the others go
// on. To replace the merge itself, provide another consumer of the sources
// group in place of [Module].
package sources
