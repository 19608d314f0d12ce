package runtime

import "k8s.io/apimachinery/pkg/types"

// Volume is one pod volume as a volume manager set it up on the host: the
// runtime binds it into containers and knows nothing else about it.
type Volume struct {
	// HostPath is what a volumeMount without subPath binds.
	HostPath string
	// Dir reports whether HostPath is a directory, so that a subPath may
	// go into it.
	Dir bool
	// ReadOnly makes every mount of the volume read-only whatever the
	// volumeMount says, as the kubelet mounts configMap, secret,
	// downwardAPI and projected volumes.
	ReadOnly bool
}

// VolumeGetter gives a runtime the volumes a volume manager set up for a
// pod. managers/volumes implements it. Implementations must be safe for
// concurrent use.
type VolumeGetter interface {
	// PodVolumes returns the pod's volumes that are set up, by volume
	// name; a volume that is not set up is missing. The map is the
	// caller's. It does not block on I/O.
	PodVolumes(uid types.UID) map[string]Volume
}

// VolumeHolder is an optional capability of a VolumeGetter: it reports
// whether it still holds volumes of a pod (set up, or not yet torn down),
// as the kubelet's podVolumesExist asks its volume manager. A runtime's
// garbage collector leaves the directory of such a pod alone, so that
// the pod's volumes are torn down once, by their manager.
type VolumeHolder interface {
	// PodVolumesExist reports whether the pod's volumes are held. It does
	// not block on I/O.
	PodVolumesExist(uid types.UID) bool
}

// VolumeAware is an optional capability of a Runtime that mounts pod
// volumes into containers. The composition root finds it by type assertion
// and gives it the volume manager. Without one (nil), a container that
// mounts a volume fails to start with ErrConfig.
type VolumeAware interface {
	// SetVolumeGetter sets where the runtime finds pod volumes. Safe to
	// call at any time.
	SetVolumeGetter(VolumeGetter)
}
