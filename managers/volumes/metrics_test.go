package volumes

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsCountSetUpsAndVolumes(t *testing.T) {
	e := newTestEnv(t)
	pod := newPod("u1", cmVolume("cfg", "app"))
	_ = e.m.SetUpPod(context.Background(), pod)
	ops := e.m.metrics.operations
	if n := testutil.CollectAndCount(ops); n != 1 {
		t.Fatalf("%d operation series, want 1", n)
	}
	gauge := e.m.metrics.volumes
	if d, a := testutil.ToFloat64(gauge.WithLabelValues("kubernetes.io/configmap", stateDesired)),
		testutil.ToFloat64(gauge.WithLabelValues("kubernetes.io/configmap", stateActual)); d != 1 || a != 0 {
		t.Fatalf("configmap volumes desired %v actual %v, want 1 and 0 while it fails", d, a)
	}
	e.objects.putConfigMap("ns", "app", map[string]string{"k": "v"})
	e.clk.Step(time.Second)
	e.setUp(t, pod)
	if a := testutil.ToFloat64(gauge.WithLabelValues("kubernetes.io/configmap", stateActual)); a != 1 {
		t.Fatalf("configmap volumes actual %v after the set-up, want 1", a)
	}
	if n := testutil.CollectAndCount(ops); n != 2 {
		t.Fatalf("%d operation series, want a fail-unknown and a success one", n)
	}
	if err := e.m.TearDownPod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(gauge); n != 0 {
		t.Fatalf("%d volume series after the tear-down, want none", n)
	}
	if n := testutil.CollectAndCount(e.reg); n == 0 {
		t.Fatal("nothing registered on the registry")
	}
}
