package env

import "k8s.io/apimachinery/pkg/types"

// ForgetOffline drops what the Builder remembers of the offline copies of
// each pod gone reports true for (which uses it logged), so that this does
// not grow with every pod that ran from its copies and went. Call it when
// pods are removed (nodekit calls it when the offline store forgets a
// pod's copies or prunes those of pods no longer checkpointed). It does
// nothing without SetOffline. Safe for concurrent use; it does no I/O.
func (b *Builder) ForgetOffline(gone func(types.UID) bool) {
	o := b.offline.Load()
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for uid := range o.logged {
		if gone(uid) {
			delete(o.logged, uid)
		}
	}
}
