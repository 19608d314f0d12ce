//go:build !linux

package volumes

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// setOwnership applies a pod's fsGroup on Linux only; elsewhere a pod with
// one fails its volume set-up saying so.
func setOwnership(_ string, fsGroup *int64, _ *corev1.PodSecurityContext, _ bool) error {
	if fsGroup == nil {
		return nil
	}
	return errors.New("fsGroup volume ownership is only supported on Linux by nodekit")
}
