package nodekit

import "testing"

// The kubelet's defaults (cmd/kubelet/app/server.go run: cgroupRoot "/" when
// cgroupsPerQOS, which is true by default): a completed Config keeps pod
// cgroups under /kubepods without any cgroup setting.
func TestCompleteDefaultsTheCgroupRootAsTheKubelet(t *testing.T) {
	no := false
	for _, c := range []struct {
		name string
		in   Config
		want string
	}{
		{"no setting: the kubelet's /", Config{NodeName: "n"}, "/"},
		{"the simulated runtime: no cgroups on the host", Config{NodeName: "n", Runtime: RuntimeSim}, ""},
		{"a root given is kept", func() Config { c := Config{NodeName: "n"}; c.CRI.CgroupParent = "/nk"; return c }(), "/nk"},
		{"cgroupsPerQOS false without a root: the runtime's default", func() Config {
			c := Config{NodeName: "n"}
			c.CRI.CgroupsPerQOS = &no
			return c
		}(), ""},
	} {
		got, err := c.in.Complete()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.CRI.CgroupParent != c.want {
			t.Errorf("%s: CgroupParent = %q, want %q", c.name, got.CRI.CgroupParent, c.want)
		}
	}
}
