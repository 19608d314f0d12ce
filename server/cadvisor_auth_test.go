package server

import (
	"reflect"
	"testing"
)

func TestCadvisorMetricsNeedTheMetricsRight(t *testing.T) {
	t.Parallel()
	if got := subresourcesFor("/metrics/cadvisor"); !reflect.DeepEqual(got, []string{"metrics"}) {
		t.Errorf("/metrics/cadvisor subresources %v, want [metrics] (nodes/metrics, as the kubelet)", got)
	}
}
