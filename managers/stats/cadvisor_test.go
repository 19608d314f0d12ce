package stats

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// series is one gathered sample: its labels and value.
type series struct {
	labels map[string]string
	value  float64
}

func gather(t *testing.T, c prometheus.Collector) map[string][]series {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]series{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s := series{labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				s.value = m.GetCounter().GetValue()
			default:
				s.value = m.GetGauge().GetValue()
			}
			out[mf.GetName()] = append(out[mf.GetName()], s)
		}
	}
	return out
}

// find returns the value of the one series of name whose labels include
// want; it fails when there is not exactly one.
func find(t *testing.T, all map[string][]series, name string, want map[string]string) float64 {
	t.Helper()
	var got []series
	for _, s := range all[name] {
		match := true
		for k, v := range want {
			if s.labels[k] != v {
				match = false
			}
		}
		if match {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Errorf("%s%v: %d series, want 1 (all: %+v)", name, want, len(got), all[name])
		return -1
	}
	return got[0].value
}

func TestCadvisorMetricsForAPod(t *testing.T) {
	t.Parallel()
	f := newFakeRuntime()
	podFixture(f)
	f.rs.Containers[c1].Image = &runtimeapi.ImageSpec{Image: "docker.io/library/busybox:1.36"}
	f.rs.Containers[c1].CreatedAt = 1_700_000_100_500_000_000
	ts := f.clk.Now().UnixNano()
	f.rs.SetFakePodSandboxStats([]*runtimeapi.PodSandboxStats{{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: sb1},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Network: &runtimeapi.NetworkUsage{Timestamp: ts, DefaultInterface: &runtimeapi.NetworkInterfaceUsage{Name: "eth0", RxBytes: u64(4321), TxBytes: u64(1234)}},
			Containers: []*runtimeapi.ContainerStats{{
				Attributes: &runtimeapi.ContainerAttributes{Id: c1},
				Cpu:        &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: u64(2_500_000_000)},
				Memory:     &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: u64(7 * mib), UsageBytes: u64(9 * mib), RssBytes: u64(5 * mib)},
				WritableLayer: &runtimeapi.FilesystemUsage{Timestamp: ts, UsedBytes: u64(40960),
					FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"}},
			}},
		},
	}})
	p := v2Provider(t, f)
	h := fakeHost{t: t, proc: p.cfg.ProcRoot}
	h.write(h.proc, "cpuinfo", "processor\t: 0\nmodel name\t: x\n\nprocessor\t: 1\nmodel name\t: x\n\nprocessor\t: 2\n\nprocessor\t: 3\n")
	h.write(h.proc, "self/mountinfo", "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"+
		"25 22 0:22 / /proc rw - proc proc rw\n")

	p.host.sys = t.TempDir()
	h.write(p.host.sys, "dev/block/259:0/uevent", "MAJOR=259\nMINOR=0\nDEVNAME=nvme0n1\nDEVTYPE=disk\nDISKSEQ=1\n")

	all := gather(t, p.ReadCadvisorMetrics(context.Background()))

	podCg := "/nodekit/kubepods/burstable/poduid1"
	app := map[string]string{"container": "app", "pod": "web", "namespace": "ns", "id": podCg + "/" + c1,
		"name": c1, "image": "docker.io/library/busybox:1.36"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for mk, mv := range m {
			out[mk] = mv
		}
		return out
	}
	if v := find(t, all, "container_cpu_usage_seconds_total", with(app, "cpu", "total")); v != 2.5 {
		t.Errorf("app cpu %v s, want 2.5", v)
	}
	for name, want := range map[string]float64{
		"container_memory_working_set_bytes": 7 * mib, "container_memory_usage_bytes": 9 * mib, "container_memory_rss": 5 * mib,
		"container_spec_cpu_quota": 50000, "container_spec_cpu_period": 100000, "container_spec_cpu_shares": 500,
		"container_spec_memory_limit_bytes": 0, "container_start_time_seconds": 1_700_000_100.5,
	} {
		if v := find(t, all, name, app); v != want {
			t.Errorf("app %s = %v, want %v", name, v, want)
		}
	}
	if v := find(t, all, "container_fs_usage_bytes", with(app, "device", "/dev/nvme0n1p2")); v != 40960 {
		t.Errorf("app fs usage %v, want the writable layer's 40960 on the device holding it", v)
	}
	pod := map[string]string{"container": "", "pod": "web", "namespace": "ns", "id": podCg, "name": "", "image": ""}
	if v := find(t, all, "container_memory_working_set_bytes", pod); v != 110*mib {
		t.Errorf("pod working set %v, want its cgroup's 110 MiB", v)
	}
	if v := find(t, all, "container_spec_memory_limit_bytes", pod); v != 256*mib {
		t.Errorf("pod memory limit %v, want memory.max", v)
	}
	if v := find(t, all, "container_network_receive_bytes_total", with(pod, "interface", "eth0")); v != 4321 {
		t.Errorf("pod rx %v, want 4321", v)
	}
	if v := find(t, all, "container_network_transmit_bytes_total", with(pod, "interface", "eth0")); v != 1234 {
		t.Errorf("pod tx %v, want 1234", v)
	}
	nvme := map[string]string{"device": "/dev/nvme0n1", "major": "259", "minor": "0"}
	for k, v := range pod {
		nvme[k] = v
	}
	if v := find(t, all, "container_blkio_device_usage_total", with(nvme, "operation", "Read")); v != 4202496 {
		t.Errorf("pod bytes read on nvme0n1 %v, want io.stat rbytes 4202496", v)
	}
	if v := find(t, all, "container_blkio_device_usage_total", with(nvme, "operation", "Write")); v != 1310720 {
		t.Errorf("pod bytes written on nvme0n1 %v, want io.stat wbytes 1310720", v)
	}
	root := map[string]string{"id": "/", "container": "", "pod": ""}
	if v := find(t, all, "container_blkio_device_usage_total", map[string]string{"id": "/", "major": "8", "minor": "0", "device": "", "operation": "Read"}); v != 1459200 {
		t.Errorf("root bytes read on 8:0 %v, want io.stat's 1459200 (device unknown to sysfs: \"\")", v)
	}
	if v := find(t, all, "container_memory_working_set_bytes", root); v != 1996*mib {
		t.Errorf("root working set %v, want the node's 1996 MiB", v)
	}
	if v := find(t, all, "machine_cpu_cores", nil); v != 4 {
		t.Errorf("machine_cpu_cores %v, want 4", v)
	}
	if v := find(t, all, "machine_memory_bytes", nil); v != 8<<30 {
		t.Errorf("machine_memory_bytes %v, want MemTotal", v)
	}
	if v := find(t, all, "container_scrape_error", nil); v != 0 {
		t.Errorf("container_scrape_error %v, want 0", v)
	}
	for name, ss := range all {
		if strings.HasPrefix(name, "container_") && name != "container_scrape_error" {
			for _, s := range ss {
				for _, l := range cadvisorLabels {
					if _, ok := s.labels[l]; !ok {
						t.Errorf("%s %v lacks label %s", name, s.labels, l)
					}
				}
			}
		}
	}
}
