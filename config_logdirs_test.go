package nodekit

import "testing"

// TestLogDirDefaults checks the kubelet's /var/log/pods and
// /var/log/containers for a real runtime, dirs under RootDir for the
// simulated one, and given dirs passed to the CRI manager as they are.
func TestLogDirDefaults(t *testing.T) {
	cases := []struct {
		name                 string
		runtime, pods, links string
		wantPods, wantLinks  string
	}{
		{"cri defaults to the kubelet's", RuntimeCRI, "", "", "/var/log/pods", "/var/log/containers"},
		{"sim defaults under the root dir", RuntimeSim, "", "", "/r/logs", "/r/containers"},
		{"given dirs are kept", RuntimeCRI, "/p", "/l", "/p", "/l"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{NodeName: "n", RootDir: "/r", Runtime: c.runtime, PodLogsDir: c.pods, ContainerLogsDir: c.links}
			got, err := cfg.Complete()
			if err != nil {
				t.Fatal(err)
			}
			if got.PodLogsDir != c.wantPods || got.ContainerLogsDir != c.wantLinks ||
				got.CRI.PodLogsDir != c.wantPods || got.CRI.ContainerLogsDir != c.wantLinks || got.statsConfig().PodLogsDir != c.wantPods {
				t.Errorf("got %q %q (CRI %q %q, stats %q), want %q %q", got.PodLogsDir, got.ContainerLogsDir,
					got.CRI.PodLogsDir, got.CRI.ContainerLogsDir, got.statsConfig().PodLogsDir, c.wantPods, c.wantLinks)
			}
		})
	}
}
