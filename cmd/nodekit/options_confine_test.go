package main

import (
	"reflect"
	"testing"
)

func TestConfinementFlagsReachTheRuntimeConfig(t *testing.T) {
	cases := []struct {
		name  string
		file  string
		args  []string
		check func(t *testing.T, o *options)
	}{
		{"the defaults serialize pulls, enforce cpu quotas and use cluster.local without cluster DNS", "", nil, func(t *testing.T, o *options) {
			cfg := o.config().CRI
			if cfg.ClusterDNS != nil || cfg.ClusterDomain != "cluster.local" || cfg.DisableCPUCFSQuota ||
				cfg.SerializeImagePulls == nil || !*cfg.SerializeImagePulls || cfg.MaxParallelImagePulls != 0 || cfg.CgroupDriver != "cgroupfs" {
				t.Errorf("defaults: %+v", cfg)
			}
		}},
		{"flags set cluster DNS, the domain and parallel pulls", "", []string{
			"--cluster-dns", "10.96.0.10,10.96.0.11", "--cluster-domain", "example.local",
			"--serialize-image-pulls=false", "--max-parallel-image-pulls", "3", "--cpu-cfs-quota=false", "--cgroup-driver", "systemd",
		}, func(t *testing.T, o *options) {
			cfg := o.config().CRI
			if !reflect.DeepEqual(cfg.ClusterDNS, []string{"10.96.0.10", "10.96.0.11"}) || cfg.ClusterDomain != "example.local" ||
				*cfg.SerializeImagePulls || cfg.MaxParallelImagePulls != 3 || !cfg.DisableCPUCFSQuota || cfg.CgroupDriver != "systemd" {
				t.Errorf("from flags: %+v", cfg)
			}
		}},
		{"start calls are not limited by default, and --max-parallel-starts or maxParallelStarts limits them", "", nil, func(t *testing.T, o *options) {
			if n := o.config().MaxParallelStarts; n != 0 {
				t.Errorf("default MaxParallelStarts %d, want 0 (no limit, as the kubelet)", n)
			}
			if o, err := parse(t, "", "--max-parallel-starts", "8"); err != nil || o.config().MaxParallelStarts != 8 {
				t.Errorf("--max-parallel-starts 8: err %v, want MaxParallelStarts 8", err)
			}
			if o, err := parse(t, "maxParallelStarts: 6\n"); err != nil || o.config().MaxParallelStarts != 6 {
				t.Errorf("config file maxParallelStarts 6: err %v", err)
			}
		}},
		{"the config file sets them by camelCase name", "clusterDns: 10.96.0.10\nclusterDomain: corp.local\nserializeImagePulls: false\n", nil, func(t *testing.T, o *options) {
			cfg := o.config().CRI
			if !reflect.DeepEqual(cfg.ClusterDNS, []string{"10.96.0.10"}) || cfg.ClusterDomain != "corp.local" || *cfg.SerializeImagePulls {
				t.Errorf("from file: %+v", cfg)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parse(t, c.file, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, o)
			cfg := o.config().CRI
			cfg.InstanceID = "n"
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
