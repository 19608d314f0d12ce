package sources

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodekit/nodekit/internal/podannotations"
)

// Source is where pods come from: a manifest directory, a URL, the API
// server. A source sends full snapshots of its pods; the Mux turns them into
// incremental updates.
type Source interface {
	// Name names the source as in the config.source annotation: "file",
	// "http" or "api".
	Name() string
	// Run sends a snapshot of the source's pods on updates every time they
	// change, the first one as soon as the source has been read (an empty
	// snapshot too), until ctx ends. Run owns nothing it sends: the Mux takes
	// ownership of each pod. Errors in single pods are logged, never
	// returned; Run returns an error only if the source cannot work at all.
	Run(ctx context.Context, updates chan<- []*corev1.Pod) error
}

// Op is the kind of a pod update, as the kubelet names them.
type Op int

// Update operations.
const (
	// ADD: new pods.
	ADD Op = iota
	// UPDATE: pods whose spec, labels or annotations changed.
	UPDATE
	// DELETE: pods to terminate gracefully (deletionTimestamp set).
	DELETE
	// REMOVE: pods gone from their source.
	REMOVE
	// RECONCILE: pods whose status alone changed.
	RECONCILE
)

// String names the operation.
func (o Op) String() string {
	return [...]string{"ADD", "UPDATE", "DELETE", "REMOVE", "RECONCILE"}[o]
}

// PodUpdate is one incremental change from one source.
type PodUpdate struct {
	// Op is the kind of change.
	Op Op
	// Pods are the pods it applies to. The receiver owns them.
	Pods []*corev1.Pod
	// Source is the source's name.
	Source string
}

// Annotations that every source stamps on its pods (defined once in
// internal/podannotations, which the pod workers and the status manager
// read them from).
const (
	// AnnotationSource names the source ("file", "http", "api").
	AnnotationSource = podannotations.Source
	// AnnotationHash is the hash of the pod as the source read it.
	AnnotationHash = podannotations.Hash
	// AnnotationSeen is when the source first saw the pod (RFC 3339).
	AnnotationSeen = podannotations.Seen
	// AnnotationMirror marks a mirror pod in the API server; its value is
	// the static pod's config hash.
	AnnotationMirror = podannotations.Mirror
)

// Source names.
const (
	FileSource      = podannotations.FileSource
	HTTPSource      = podannotations.HTTPSource
	APIServerSource = podannotations.APIServerSource
)
