package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/stats"
	"github.com/nodekit/nodekit/server"
)

// writeFiles writes name -> content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cadvisorProvider is the CRI stats provider on a fake cgroup v1 host with
// one pod "web" in namespace "ns" running container "app".
func cadvisorProvider(t *testing.T) *stats.CRI {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"proc/stat":                           "cpu  1 2 3\nbtime 1700000000\n",
		"proc/meminfo":                        "MemTotal:       2048000 kB\nMemFree:         1024000 kB\n",
		"proc/cpuinfo":                        "processor\t: 0\n\nprocessor\t: 1\n",
		"cgroup/cpuacct/cpuacct.usage":        "5000000000\n",
		"cgroup/memory/memory.usage_in_bytes": "104857600\n",
		"cgroup/memory/memory.stat":           "total_inactive_file 4857600\ntotal_rss 50000000\n",
	})
	rs := critest.NewFakeRuntimeService()
	rs.SetFakeSandboxes([]*critest.FakePodSandbox{{PodSandboxStatus: runtimeapi.PodSandboxStatus{
		Id: "sb", Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "ns", Uid: "u1"},
		State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: 1_700_000_000e9,
	}}})
	rs.SetFakeContainers([]*critest.FakeContainer{{SandboxID: "sb", ContainerStatus: runtimeapi.ContainerStatus{
		Id: "c0ffee", Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "registry.k8s.io/pause:3.10"},
		State: runtimeapi.ContainerState_CONTAINER_RUNNING, CreatedAt: 1_700_000_001e9,
	}}})
	rs.SetFakePodSandboxStats([]*runtimeapi.PodSandboxStats{{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: "sb"},
		Linux: &runtimeapi.LinuxPodSandboxStats{Containers: []*runtimeapi.ContainerStats{{
			Attributes: &runtimeapi.ContainerAttributes{Id: "c0ffee"},
			Cpu:        &runtimeapi.CpuUsage{UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 1_500_000_000}},
			Memory:     &runtimeapi.MemoryUsage{WorkingSetBytes: &runtimeapi.UInt64Value{Value: 2048}},
		}}},
	}})
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	return stats.NewCRI(rs, critest.NewFakeImageService(), clk, logr.Discard(), stats.Config{
		RootDir: dir, ProcRoot: filepath.Join(dir, "proc"), CgroupfsRoot: filepath.Join(dir, "cgroup"),
	})
}

func TestCadvisorRoute(t *testing.T) {
	t.Parallel()
	s := server.New(nil, nil, nil, logr.Discard(), server.Config{})
	s.ServeStats(cadvisorProvider(t))

	code, ctype, body := getStats(t, s.Handler(), "/metrics/cadvisor")
	if code != http.StatusOK || !strings.HasPrefix(ctype, "text/plain") {
		t.Fatalf("/metrics/cadvisor: %d %q\n%s", code, ctype, body)
	}
	labels := `{container="app",id="",image="registry.k8s.io/pause:3.10",name="c0ffee",namespace="ns",pod="web"`
	for _, want := range []string{
		"# TYPE container_cpu_usage_seconds_total counter",
		`container_cpu_usage_seconds_total{container="app",cpu="total",id="",image="registry.k8s.io/pause:3.10",name="c0ffee",namespace="ns",pod="web"} 1.5`,
		"container_memory_working_set_bytes" + labels + "} 2048",
		"container_start_time_seconds" + labels + "} 1.700000001e+09",
		`container_memory_working_set_bytes{container="",id="/",image="",name="",namespace="",pod=""} 1e+08`,
		"machine_cpu_cores{",
		"container_scrape_error 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics/cadvisor lacks %q:\n%s", want, body)
		}
	}

	// A provider that gives no cadvisor metrics leaves the route out.
	plain := server.New(nil, nil, nil, logr.Discard(), server.Config{})
	plain.ServeStats(&fakeStats{})
	if code, _, _ := getStats(t, plain.Handler(), "/metrics/cadvisor"); code != http.StatusNotFound {
		t.Errorf("/metrics/cadvisor without a cadvisor source: %d, want 404", code)
	}
}
