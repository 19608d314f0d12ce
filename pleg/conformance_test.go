package pleg_test

import (
	"testing"

	"github.com/nodekit/nodekit/pleg"
	"github.com/nodekit/nodekit/pleg/plegtest"
)

// Both PLEGs pass the conformance suite on the simulated runtime.

func TestGenericConformance(t *testing.T) {
	plegtest.Suite(t, func(env plegtest.Env) pleg.Interface {
		return pleg.NewGeneric(env.Runtime, env.Cache, env.Clock, nil, env.Log, pleg.Config{})
	}, plegtest.Options{KubeletEvents: true})
}

func TestEventedConformance(t *testing.T) {
	plegtest.Suite(t, func(env plegtest.Env) pleg.Interface {
		dec, _ := env.Runtime.(pleg.EventDecoder)
		return pleg.NewEvented(env.Events, env.Runtime, dec, env.Cache, env.Clock, nil, env.Log, pleg.Config{})
	}, plegtest.Options{KubeletEvents: true})
}

func TestEventedWithoutDecoderConformance(t *testing.T) {
	plegtest.Suite(t, func(env plegtest.Env) pleg.Interface {
		return pleg.NewEvented(env.Events, env.Runtime, nil, env.Cache, env.Clock, nil, env.Log, pleg.Config{})
	}, plegtest.Options{KubeletEvents: true})
}
