package pleg

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

var _ Interface = (*Evented)(nil)

// EventSource is the part of a CRI RuntimeService the evented PLEG reads:
// the container event stream. criapi.RuntimeService satisfies it, over gRPC
// (k8s.io/cri-client) or in process (runtime/sim).
type EventSource interface {
	// GetContainerEvents sends container events to ch until ctx ends or the
	// stream fails, and returns why it ended; connected, when not nil, is
	// called once the stream is open.
	GetContainerEvents(ctx context.Context, ch chan *runtimeapi.ContainerEventResponse, connected func(runtimeapi.RuntimeService_GetContainerEventsClient)) error
}

// EventDecoder turns a CRI container event into the status of the pod it is
// about; runtime/cri's Manager implements it.
type EventDecoder interface {
	// PodStatusFromEvent returns the pod's status as the event shows it: the
	// event's sandbox and the containers in it, converted as GetPodStatus
	// converts them (an event does not show the pod's other sandboxes). ok
	// is false when the event carries no sandbox status or is about a pod
	// this agent does not own.
	PodStatusFromEvent(ev *runtimeapi.ContainerEventResponse) (status *noderuntime.PodStatus, ok bool)
}

// Mode is what drives the evented PLEG at a given time.
type Mode string

// Modes of Evented.
const (
	// ModeEvents: the event stream drives the cache; a relist runs every
	// ReconcilePeriod, and when pod workers wait.
	ModeEvents Mode = "events"
	// ModeRelisting: the stream failed FallbackAfter times in a row; the
	// PLEG relists every RelistPeriod until the stream is back.
	ModeRelisting Mode = "relisting"
)

// Evented is the PLEG driven by the CRI container event stream
// (GetContainerEvents, which containerd 2.x serves): each event's pod status
// goes into the Cache and gives the same events Generic would, within
// milliseconds of the change and without polling the runtime. A relist
// every ReconcilePeriod finds what the stream missed (counted), relists
// vouch for pod workers waiting on the Cache, and when the stream fails
// FallbackAfter times in a row the PLEG relists every RelistPeriod until the
// stream is back. See the package documentation for the Cache contract and
// how the evented PLEG keeps it.
type Evented struct {
	src     EventSource
	rt      noderuntime.Runtime
	dec     EventDecoder
	cache   *Cache
	clk     clock.WithTicker
	log     logr.Logger
	cfg     Config
	events  chan *Event
	metrics *metrics
	em      *eventedMetrics

	// mu serializes event handling and relists and guards the fields below.
	mu sync.Mutex
	// pods holds what the PLEG last told the agent about each pod.
	pods map[types.UID]*podState
	// suspects are changes a relist found that no event had reported yet.
	suspects map[string]suspect
	// tombs holds the IDs of removed objects, so that a late event showing
	// one is not taken for news.
	tombs map[string]time.Time
	// buf is reused for each pod's events.
	buf []*Event
	// relisting is set while a relist runs, so inspect can tell its
	// inspections from those made on an event.
	relisting bool
	// rl lists the runtime and keeps the relist health and metrics.
	rl *relistCore

	// healthMu guards the fields below it.
	healthMu       sync.Mutex
	mode           Mode
	connectedSince time.Time

	received, missed, reconnects, dropped, inspections, eventInspections atomic.Uint64
}

// NewEvented returns an evented PLEG that reads events from src, relists and
// inspects rt, and writes to cache. dec converts an event into the pod's
// status; with a nil dec every event makes the PLEG inspect the pod with
// GetPodStatus instead (correct for any Runtime, at the cost of the CRI
// calls an inspection makes). Metrics go to reg (nil: none). Zero fields of
// cfg take their defaults; call cfg.Validate first. It does no I/O and
// starts no goroutines; call Run.
func NewEvented(src EventSource, rt noderuntime.Runtime, dec EventDecoder, cache *Cache, clk clock.WithTicker, reg prometheus.Registerer, log logr.Logger, cfg Config) *Evented {
	cfg = cfg.withDefaults()
	e := &Evented{
		src: src, rt: rt, dec: dec, cache: cache, clk: clk,
		log:      log.WithName("pleg").WithName("evented"),
		cfg:      cfg,
		events:   make(chan *Event, cfg.ChannelCapacity),
		metrics:  newMetrics(reg),
		em:       newEventedMetrics(reg),
		pods:     make(map[types.UID]*podState),
		suspects: make(map[string]suspect),
		tombs:    make(map[string]time.Time),
		mode:     ModeEvents,
	}
	e.rl = newRelistCore(rt, cache, clk, e.log, e.metrics)
	e.em.setMode(ModeEvents)
	return e
}

// Run opens the event stream, relists once, and then handles events,
// relists and stream failures until ctx ends; it returns nil then. Call it
// once. It runs one goroutine of its own, for the stream, and returns only
// after that goroutine has ended.
func (e *Evented) Run(ctx context.Context) error {
	e.rl.started()
	ev := e.cfg.Evented
	e.log.Info("Starting evented PLEG", "reconcilePeriod", ev.ReconcilePeriod, "fallbackAfter", ev.FallbackAfter,
		"fallbackRelistPeriod", e.cfg.RelistPeriod, "decoder", e.dec != nil)
	defer e.log.Info("Stopped evented PLEG")
	// The CRI client logs through the context's logger.
	ctx = klog.NewContext(ctx, e.log.WithName("stream"))
	streamCtx, cancel := context.WithCancel(ctx)
	raw := make(chan *runtimeapi.ContainerEventResponse, e.cfg.ChannelCapacity)
	notes := make(chan streamNote)
	done := make(chan struct{})
	go e.stream(streamCtx, raw, notes, done)
	defer func() {
		cancel()
		// A stream blocked on a full channel ends only once it can send.
		for {
			select {
			case <-raw:
			case <-done:
				return
			}
		}
	}()
	e.relist(ctx, reasonInitial)
	e.loop(ctx, raw, notes)
	return nil
}

// Watch returns the event channel: the same channel on every call, never
// closed. Events for a pod are sent after the pod's new status is in the
// Cache. The PLEG never blocks on it: when it is full, events are dropped.
func (e *Evented) Watch() <-chan *Event { return e.events }

// Healthy reports false when the last RelistFailureThreshold relists in a
// row (of any kind: reconcile, fallback, for waiting pod workers) could not
// list the runtime, when the last completed relist is older than
// RelistThreshold while relisting, or older than ReconcilePeriod plus
// RelistThreshold while events drive the cache, or when Run started that
// long ago and no relist completed. Safe for concurrent use.
func (e *Evented) Healthy() (bool, error) {
	mode := e.Mode()
	threshold := e.cfg.RelistThreshold
	if mode == ModeEvents {
		threshold += e.cfg.Evented.ReconcilePeriod
	}
	if err := e.rl.health("evented pleg (mode "+string(mode)+")", e.cfg.RelistFailureThreshold, threshold); err != nil {
		return false, err
	}
	return true, nil
}

// Mode reports what drives the PLEG now: events, or relisting after the
// stream failed. Safe for concurrent use.
func (e *Evented) Mode() Mode {
	e.healthMu.Lock()
	defer e.healthMu.Unlock()
	return e.mode
}

// LastRelist returns when the last completed relist began; zero if none
// has. Safe for concurrent use.
func (e *Evented) LastRelist() time.Time { return e.rl.lastRelist() }

// EventsReceived returns how many container events the stream delivered,
// including those about other clients' containers.
func (e *Evented) EventsReceived() uint64 { return e.received.Load() }

// MissedEvents returns how many changes a relist found that the stream,
// healthy all along, had not reported within a grace period. It should
// stay 0.
func (e *Evented) MissedEvents() uint64 { return e.missed.Load() }

// Reconnects returns how many times the stream was opened again after it
// had been open.
func (e *Evented) Reconnects() uint64 { return e.reconnects.Load() }

// Inspections returns how many times the PLEG called GetPodStatus.
func (e *Evented) Inspections() uint64 { return e.inspections.Load() }

// EventInspections returns how many of Inspections were made on an event
// rather than by a relist: for an event the decoder could not read, a late
// event showing news, or a pod whose cached entry holds a failed
// inspection. A relist that lists a change before its event has arrived
// (a relist for waiting pod workers, say) inspects the pod too, and is not
// counted here.
func (e *Evented) EventInspections() uint64 { return e.eventInspections.Load() }

// DroppedEvents returns how many events were dropped because the event
// channel was full.
func (e *Evented) DroppedEvents() uint64 { return e.dropped.Load() }

// Relist lists the runtime once, reconciles the cache with it and advances
// the cache's global timestamp; Run calls it, tests may too. Calls are
// serialized with each other and with event handling.
func (e *Evented) Relist(ctx context.Context) { e.relist(ctx, reasonManual) }

// setMode records the mode and its metric, and logs a change.
func (e *Evented) setMode(m Mode) {
	e.healthMu.Lock()
	old := e.mode
	e.mode = m
	if old != m {
		e.em.setMode(m)
	}
	e.healthMu.Unlock()
	if old != m {
		e.log.Info("Evented PLEG changed mode", "mode", m, "previous", old)
	}
}

// setConnected records when the stream opened, or zero when it failed.
func (e *Evented) setConnected(t time.Time) {
	e.healthMu.Lock()
	e.connectedSince = t
	e.healthMu.Unlock()
}

// send emits events without blocking, as Generic does.
func (e *Evented) send(events []*Event) {
	for _, ev := range events {
		if ev.Type == ContainerChanged {
			continue
		}
		e.log.V(2).Info("Pod lifecycle event", "podUID", ev.ID, "event", ev.Type, "containerID", ev.Data)
		select {
		case e.events <- ev:
		default:
			n := e.dropped.Add(1)
			e.metrics.discardEvents.Inc()
			e.log.Error(nil, "Event channel is full; dropping event", "podUID", ev.ID, "event", ev.Type, "dropped", n)
		}
	}
}
