// Package mount holds the few mount operations the volume manager and the
// CRI runtime manager share: mounting a tmpfs on a directory, listing this
// process's mount points, and unmounting everything below a directory
// before it is removed. They are Linux-only; elsewhere mounting a tmpfs
// fails with an error saying so and there is nothing to unmount.
//
// The functions are safe for concurrent use on different directories.
package mount
