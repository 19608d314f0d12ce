// Package downward reads the downward API's fields of a pod, as the
// kubelet does for env (fieldRef, resourceFieldRef) and for downwardAPI
// volumes.
package downward
