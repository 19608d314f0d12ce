package cri

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	testingclock "k8s.io/utils/clock/testing"
)

func TestInstrumentCountsAndTimesOperationsWithKubeletNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	fake := critest.NewFakeRuntimeService()
	rs, is := Instrument(fake, critest.NewFakeImageService(), testingclock.NewFakeClock(time.Unix(0, 0)), reg)
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "n", Uid: "u"}}
	if _, err := rs.RunPodSandbox(t.Context(), cfg, ""); err != nil {
		t.Fatal(err)
	}
	fake.InjectError("ListContainers", errors.New("boom"))
	if _, err := rs.ListContainers(t.Context(), nil); err == nil {
		t.Fatal("injected error was lost")
	}
	if _, err := is.ListImages(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	m := newOpMetrics(reg, testingclock.NewFakeClock(time.Unix(0, 0))) // the registered collectors
	for op, want := range map[string]float64{"run_podsandbox": 1, "list_containers": 1, "list_images": 1} {
		if got := testutil.ToFloat64(m.total.WithLabelValues(op)); got != want {
			t.Errorf("total[%s] = %v, want %v", op, got, want)
		}
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues("list_containers")); got != 1 {
		t.Errorf("errors[list_containers] = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues("run_podsandbox")); got != 0 {
		t.Errorf("errors[run_podsandbox] = %v, want 0", got)
	}
}
