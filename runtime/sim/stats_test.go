package sim

import (
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestStatsArePlausibleAndGrowWithTime(t *testing.T) {
	e := newEnv(t, Config{Images: []string{"img"}})
	sb, err := e.r.RunPodSandbox(e.ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u"},
		Labels:   map[string]string{"who": "me"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u"}}
	id, err := e.r.CreateContainer(e.ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "c"}, Image: &runtimeapi.ImageSpec{Image: "img"},
		Labels: map[string]string{"who": "me"},
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.r.StartContainer(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	e.clk.Step(10 * time.Second)

	cs, err := e.r.ListContainerStats(e.ctx, &runtimeapi.ContainerStatsFilter{LabelSelector: map[string]string{"who": "me"}})
	if err != nil || len(cs) != 1 {
		t.Fatalf("ListContainerStats = %v, %v; want one", cs, err)
	}
	c := cs[0]
	cores := c.GetCpu().GetUsageNanoCores().GetValue()
	if cores < 5e6 || cores >= 50e6 {
		t.Errorf("nanocores %d, want 5-50 millicores", cores)
	}
	if got, want := c.GetCpu().GetUsageCoreNanoSeconds().GetValue(), cores*10; got != want {
		t.Errorf("cumulative cpu %d after 10s, want %d", got, want)
	}
	if ws := c.GetMemory().GetWorkingSetBytes().GetValue(); ws < 4<<20 || ws >= 20<<20 {
		t.Errorf("working set %d, want 4-20 MiB", ws)
	}
	if c.GetWritableLayer().GetUsedBytes().GetValue() == 0 {
		t.Error("writable layer is empty")
	}

	ps, err := e.r.ListPodSandboxStats(e.ctx, &runtimeapi.PodSandboxStatsFilter{LabelSelector: map[string]string{"who": "me"}})
	if err != nil || len(ps) != 1 {
		t.Fatalf("ListPodSandboxStats = %v, %v; want one", ps, err)
	}
	l := ps[0].GetLinux()
	if l.GetCpu().GetUsageCoreNanoSeconds().GetValue() <= c.GetCpu().GetUsageCoreNanoSeconds().GetValue() ||
		l.GetMemory().GetWorkingSetBytes().GetValue() <= c.GetMemory().GetWorkingSetBytes().GetValue() {
		t.Errorf("pod stats %v do not add the pause process to the container's", l)
	}
	if l.GetNetwork().GetDefaultInterface().GetRxBytes().GetValue() != 20000 || l.GetProcess().GetProcessCount().GetValue() != 2 {
		t.Errorf("pod network %v processes %v", l.GetNetwork(), l.GetProcess())
	}
	if len(l.GetContainers()) != 1 || l.GetContainers()[0].GetAttributes().GetId() != id {
		t.Errorf("pod's containers %v", l.GetContainers())
	}
	other, err := e.r.ListPodSandboxStats(e.ctx, &runtimeapi.PodSandboxStatsFilter{LabelSelector: map[string]string{"who": "else"}})
	if err != nil || len(other) != 0 {
		t.Errorf("a selector nobody matches gave %v, %v", other, err)
	}

	if err := e.r.StopPodSandbox(e.ctx, sb); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.PodSandboxStats(e.ctx, sb); err == nil {
		t.Error("PodSandboxStats of a stopped sandbox succeeded")
	}
	one, err := e.r.ContainerStats(e.ctx, id)
	if err != nil || one.GetCpu() != nil || one.GetWritableLayer() == nil {
		t.Errorf("ContainerStats of a stopped container = %v, %v; want only its writable layer", one, err)
	}
}
