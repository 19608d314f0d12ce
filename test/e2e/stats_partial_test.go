//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/stats"
	noderuntime "github.com/nodekit/nodekit/runtime"
	"github.com/nodekit/nodekit/server"
)

// TestStatsSummaryKeepsOtherPodsBesideASandboxWithoutCgroupParent makes,
// over CRI on the lab's containerd, a normal pod (a sandbox with a cgroup
// parent and a running container) and beside it a sandbox without a cgroup
// parent, both labelled with one instance ID, and serves that instance's
// stats as nodekit composes them (the CRI stats provider behind the
// server's /stats/summary and /metrics/cadvisor). containerd fails
// ListPodSandboxStats for the whole list because of the second sandbox;
// the summary must still hold the node and the normal pod with its
// container's figures. (The sandboxes are made by hand rather than by an
// agent: an agent stops a sandbox of its instance that no pod of its
// sources owns, which would end the condition under test.)
func TestStatsSummaryKeepsOtherPodsBesideASandboxWithoutCgroupParent(t *testing.T) {
	env := loadEnv(t)
	rs := env.runtime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	instance := fmt.Sprintf("e2e-stats-partial-%d", time.Now().UnixNano()%1000000)
	labels := map[string]string{noderuntime.LabelInstance: instance}

	// The normal pod, its cgroup where nodekit's CRI manager puts a
	// best-effort pod's.
	goodUID := instance + "-good"
	goodCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "good", Namespace: "stats-partial", Uid: goodUID},
		Labels:       labels,
		LogDirectory: t.TempDir(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: filepath.Join("/", env.CgroupParent, "kubepods", "besteffort", "pod"+goodUID),
		},
	}
	good := runSandbox(ctx, t, rs, goodCfg)
	app, err := rs.CreateContainer(ctx, good, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Labels:   labels,
		Image:    &runtimeapi.ImageSpec{Image: env.Image},
		Command:  []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"},
		LogPath:  "app.log",
	}, goodCfg)
	if err != nil {
		t.Fatalf("create container app: %v", err)
	}
	if err := rs.StartContainer(ctx, app); err != nil {
		t.Fatalf("start container app: %v", err)
	}

	// The sandbox without a cgroup parent.
	bad := runSandbox(ctx, t, rs, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "no-cgroup-parent", Namespace: "stats-partial", Uid: instance + "-bad"},
		Labels:   labels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	})
	_, listErr := rs.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{LabelSelector: labels})
	if listErr == nil {
		t.Fatalf("ListPodSandboxStats succeeded beside sandbox %s without a cgroup parent: the runtime does not show the failure under test", bad)
	}
	t.Logf("ListPodSandboxStats fails as expected: %v", listErr)

	var logs syncBuffer
	log := funcr.New(func(prefix, args string) { logs.WriteString(prefix + " " + args + "\n") }, funcr.Options{})
	provider := stats.NewCRI(rs, env.images(t), clock.RealClock{}, log, stats.Config{
		NodeName: "stats-partial", InstanceID: instance, RootDir: t.TempDir(), CgroupRoot: env.CgroupParent,
	})
	srv := server.New(nil, nil, nil, log, server.Config{})
	srv.ServeStats(provider)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srvCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(srvCtx, l) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	base := "http://" + l.Addr().String()

	var summary statsapi.Summary
	var lastErr error
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		lastErr = httpGetJSON(ctx, base+"/stats/summary", &summary)
		if lastErr == nil && podContainerMeasured(&summary, "good", "app") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/stats/summary never held pod good with app's cpu and memory (last error %v, summary %+v)\nlogs:\n%s",
				lastErr, summary.Pods, logs.String())
		}
	}
	if summary.Node.CPU == nil || summary.Node.Memory == nil || summary.Node.Memory.WorkingSetBytes == nil {
		t.Errorf("node stats missing: %+v", summary.Node)
	}
	for _, p := range summary.Pods {
		if p.PodRef.Name == "no-cgroup-parent" && p.CPU != nil {
			t.Errorf("pod no-cgroup-parent has pod-level cpu %+v, which its runtime cannot give", p.CPU)
		}
	}
	// A few more scrapes: the bad sandbox is logged once, not per scrape.
	for range 3 {
		if err := httpGetJSON(ctx, base+"/stats/summary?only_cpu_and_memory=true", &summary); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "cannot read a pod's sandbox stats"); n != 1 {
		t.Errorf("%d log lines for the sandbox without a cgroup parent after 4+ scrapes, want 1:\n%s", n, logs.String())
	}

	// /metrics/cadvisor names the normal pod's container too.
	body, err := httpGet(ctx, base+"/metrics/cadvisor")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"container_cpu_usage_seconds_total", "container_memory_working_set_bytes"} {
		want := fmt.Sprintf(`%s{container="app",`, name)
		if !strings.Contains(body, want) || !strings.Contains(body, `pod="good"`) {
			t.Errorf("/metrics/cadvisor lacks %s for pod good:\n%s", name, body)
		}
	}
}

// runSandbox runs a sandbox and removes it when the test ends.
func runSandbox(ctx context.Context, t *testing.T, rs interface {
	RunPodSandbox(context.Context, *runtimeapi.PodSandboxConfig, string) (string, error)
	StopPodSandbox(context.Context, string) error
	RemovePodSandbox(context.Context, string) error
}, cfg *runtimeapi.PodSandboxConfig) string {
	t.Helper()
	id, err := rs.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatalf("run sandbox %s: %v", cfg.GetMetadata().GetName(), err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rs.StopPodSandbox(c, id); err != nil {
			t.Errorf("stop sandbox %s: %v", id, err)
		}
		if err := rs.RemovePodSandbox(c, id); err != nil {
			t.Errorf("remove sandbox %s: %v", id, err)
		}
	})
	return id
}

// podContainerMeasured reports whether the summary holds the pod with the
// container's CPU usage and working set.
func podContainerMeasured(s *statsapi.Summary, pod, container string) bool {
	for _, p := range s.Pods {
		if p.PodRef.Name != pod {
			continue
		}
		for _, c := range p.Containers {
			if c.Name == container && c.CPU != nil && c.CPU.UsageCoreNanoSeconds != nil && c.Memory != nil && c.Memory.WorkingSetBytes != nil {
				return true
			}
		}
	}
	return false
}

func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return string(body), nil
}

func httpGetJSON(ctx context.Context, url string, v any) error {
	body, err := httpGet(ctx, url)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(body), v)
}
