package podworkers

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func TestSyncDurationsAreRecordedByOperation(t *testing.T) {
	hs := newHarness(t, Config{})
	hs.pw.duration = newWorkerDuration(prometheus.NewRegistry())
	hs.run()
	pod := newPod("a", 1)
	hs.update(SyncPodCreate, pod)
	hs.expect(kindSync, "a").ok()
	hs.kill(pod, nil)
	hs.expect(kindTerminating, "a").ok()
	hs.expect(kindTerminated, "a").ok()
	<-hs.exits
	if n := testutil.CollectAndCount(hs.pw.duration); n != 2 {
		t.Fatalf("%d operation series, want create and kill", n)
	}
	var m dto.Metric
	if err := hs.pw.duration.WithLabelValues("kill").(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetHistogram().GetSampleCount(); got != 2 {
		t.Fatalf("kill samples = %d, want 2 (terminating and terminated)", got)
	}
}
