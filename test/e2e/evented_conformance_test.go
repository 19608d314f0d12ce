//go:build e2e

package e2e

import (
	"testing"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/pleg/plegtest"
)

// Both PLEGs pass the conformance suite on the private containerd: events
// come from its CRI GetContainerEvents stream, exits from real processes.
// (The evented run was gated for a while on an intermittent "went back in
// time" of the newer-statuses case; that was plegtest judging a woken
// GetNewerThan against polls made after the call, fixed in plegtest.)

func TestEventedPLEGConformanceOnContainerd(t *testing.T) {
	env := loadEnv(t)
	var built []*pleg.Evented
	plegtest.SuiteOn(t, plegtest.CRIBackend(env.Endpoint, env.Image, env.CgroupParent), func(e plegtest.Env) pleg.Interface {
		dec, ok := e.Runtime.(pleg.EventDecoder)
		if !ok {
			t.Fatalf("the CRI runtime manager %T is not a pleg.EventDecoder", e.Runtime)
		}
		p := pleg.NewEvented(e.Events, e.Runtime, dec, e.Cache, e.Clock, nil, e.Log, pleg.Config{})
		built = append(built, p)
		return p
	}, plegtest.Options{KubeletEvents: true})
	var received, missed, inspections uint64
	for _, p := range built {
		received += p.EventsReceived()
		missed += p.MissedEvents()
		inspections += p.Inspections()
	}
	t.Logf("evented PLEGs: %d events received, %d missed, %d inspections", received, missed, inspections)
	if received == 0 {
		t.Error("containerd's event stream delivered no event: the evented PLEG ran on relists alone")
	}
	if missed != 0 {
		t.Errorf("the evented PLEGs missed %d events, want 0", missed)
	}
}

func TestGenericPLEGConformanceOnContainerd(t *testing.T) {
	env := loadEnv(t)
	plegtest.SuiteOn(t, plegtest.CRIBackend(env.Endpoint, env.Image, env.CgroupParent), func(e plegtest.Env) pleg.Interface {
		return pleg.NewGeneric(e.Runtime, e.Cache, e.Clock, nil, e.Log, pleg.Config{})
	}, plegtest.Options{KubeletEvents: true})
}
