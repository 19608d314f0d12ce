package pleg

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// Interface is a pod lifecycle event generator: it watches the runtime, keeps
// the pod status Cache up to date and tells the agent which pods changed.
type Interface interface {
	// Run watches the runtime until ctx ends; it returns nil on a clean stop.
	Run(ctx context.Context) error
	// Watch returns the channel of events. It is the same channel on every
	// call; it is never closed.
	Watch() <-chan *Event
	// Healthy reports whether the PLEG keeps up with the runtime; the error
	// says why not.
	Healthy() (bool, error)
}

// EventType is the kind of a lifecycle event.
type EventType string

// Event types, as the kubelet names them.
const (
	// ContainerStarted: a container moved to running.
	ContainerStarted EventType = "ContainerStarted"
	// ContainerDied: a container moved to exited.
	ContainerDied EventType = "ContainerDied"
	// ContainerRemoved: an exited container was removed.
	ContainerRemoved EventType = "ContainerRemoved"
	// PodSync: the pod needs a sync (e.g. its inspection failed).
	PodSync EventType = "PodSync"
	// ContainerChanged: a container changed state in another way (created,
	// unknown).
	ContainerChanged EventType = "ContainerChanged"
)

// Event is one lifecycle event of one pod.
type Event struct {
	// ID is the pod UID.
	ID types.UID
	// Type is what happened.
	Type EventType
	// Data is the runtime container ID (without type prefix) the event is
	// about; empty for PodSync.
	Data string
}
