package atomicref

import (
	"errors"
	"testing"
)

func TestRefStoresLoadsAndEmpties(t *testing.T) {
	var r Ref[error]
	if _, ok := r.Load(); ok {
		t.Fatal("the zero Ref holds a value")
	}
	want := errors.New("x")
	r.Store(want)
	if got, ok := r.Load(); !ok || got != want {
		t.Fatalf("Load = %v, %v; want %v, true", got, ok, want)
	}
	r.Store(nil)
	if got, ok := r.Load(); ok || got != nil {
		t.Fatalf("after Store(nil): Load = %v, %v; want nil, false", got, ok)
	}
	var nilRef *Ref[error]
	if _, ok := nilRef.Load(); ok {
		t.Fatal("a nil Ref holds a value")
	}
}
