package mount

// SubPathsDir, in a pod's directory, holds the bind mounts of its
// containers' subPaths: <volume>/<container>/<index of the volumeMount>,
// the kubelet's layout. The runtime makes them (runtime/cri); the runtime's
// garbage collection and the volume manager's tear-down remove them with
// CleanSubPaths.
const SubPathsDir = "volume-subpaths"
