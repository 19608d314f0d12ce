// Package images is the node's image garbage collector, the kubelet's image
// GC manager.
//
// # Data flow
//
// Every detection pass lists the runtime's images (CRI ListImages) and every
// container the runtime has, in any state and of any client sharing it (CRI
// ListContainers without a filter), and keeps one record per image: when it
// was first detected and when it was last seen in use. Once per period
// (5m) GarbageCollect reads the image filesystem (CRI ImageFsInfo plus
// statfs of its mount point, through ImageFs); when its usage reaches the
// high threshold (85%), it removes unused images, least recently used
// first (then the earliest detected), until usage is down to the low
// threshold (80%). With MaxAge set, images unused for longer are removed
// first whatever the usage. An image is never removed while a container
// uses it, while the runtime pins it (CRI Image.pinned) or while it is the
// runtime's sandbox image, nor before it was detected MinAge (2m) ago.
//
// When a pass cannot free enough space it records a FreeDiskSpaceFailed
// Warning event on the node; a pass that fails twice in a row records
// ImageGCFailed. The eviction manager calls DeleteUnusedImages to reclaim
// disk before it evicts pods.
//
// # Extending
//
// Manager is the slot: an embedder replaces GC with fx.Decorate or by
// providing its own Manager. ImageFs is the smaller slot for where usage
// comes from.
//
// # Concurrency
//
// GC is safe for concurrent use: passes are serialised by one mutex.
package images
