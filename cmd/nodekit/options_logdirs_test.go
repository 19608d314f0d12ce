package main

import "testing"

// TestLogDirFlags checks --pod-logs-dir and --container-logs-dir, and that
// the first wins over the file's podLogsDir, as flags win over the file.
func TestLogDirFlags(t *testing.T) {
	cases := []struct {
		name, file          string
		args                []string
		wantPods, wantLinks string
	}{
		{"neither: the defaults are left to nodekit.Config", "", nil, "", ""},
		{"the flags", "", []string{"--pod-logs-dir", "/srv/pods", "--container-logs-dir", "/srv/links"}, "/srv/pods", "/srv/links"},
		{"the file alone", kcHeader + "podLogsDir: /srv/file-pods\n", nil, "/srv/file-pods", ""},
		{"the flag over the file", kcHeader + "podLogsDir: /srv/file-pods\n", []string{"--pod-logs-dir", "/srv/pods"}, "/srv/pods", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := kubeletConfig(t, c.file, c.args...)
			if cfg.PodLogsDir != c.wantPods || cfg.ContainerLogsDir != c.wantLinks {
				t.Errorf("PodLogsDir %q ContainerLogsDir %q, want %q %q", cfg.PodLogsDir, cfg.ContainerLogsDir, c.wantPods, c.wantLinks)
			}
		})
	}
}
