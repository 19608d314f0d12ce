package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// agent starts one node agent standalone on the private containerd, with
// static pods from a manifest directory.
type agent struct {
	name string
	// binary is the agent's executable.
	binary string
	// command returns the agent's command for root directory dir,
	// manifest directory manifests and pods pods, and the URLs it serves;
	// it may write files under dir.
	command func(dir, manifests string, pods int) (*exec.Cmd, endpoints, error)
}

// endpoints are the URLs of an agent the benchmark reads.
type endpoints struct {
	// metrics is its /metrics (the PLEG relist histogram).
	metrics string
	// resource is its /metrics/resource on a port without authentication
	// (the read-only port), scraped as metrics-server does during the
	// steady window.
	resource string
}

// kubeletAgent is the upstream kubelet with the settings a standalone
// kubelet needs on these machines (cgroup v1, cgroupfs, no swap check, no
// API server; anonymous access to its port on loopback, for /metrics) and
// its defaults otherwise, and its read-only port (which serves
// /metrics/resource without authentication, as nodekit's does): stats, eviction, image and container GC all run
// as they do on a node.
func kubeletAgent(o options) agent {
	return agent{name: "kubelet", binary: o.kubelet, command: func(dir, manifests string, pods int) (*exec.Cmd, endpoints, error) {
		ports, err := freePorts(3) // the TLS port, the read-only port, healthz
		if err != nil {
			return nil, endpoints{}, err
		}
		port, readOnly, healthz := ports[0], ports[1], ports[2]
		cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %s
containerRuntimeEndpoint: %s
staticPodPath: %s
address: 127.0.0.1
port: %d
readOnlyPort: %d
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
failSwapOn: false
resolvConf: /etc/resolv.conf
serializeImagePulls: false
maxPods: %d
`, o.cgroupRoot, o.endpoint, manifests, port, readOnly, healthz, maxPods(pods))
		path := filepath.Join(dir, "kubelet-config.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			return nil, endpoints{}, err
		}
		return exec.Command(o.kubelet, "--config="+path, "--root-dir="+filepath.Join(dir, "root"),
				"--hostname-override=peerbench-kubelet", "--v=1"),
			endpoints{metrics: fmt.Sprintf("https://127.0.0.1:%d/metrics", port), resource: fmt.Sprintf("http://127.0.0.1:%d/metrics/resource", readOnly)}, nil
	}}
}

// nodekitAgent is nodekit with its defaults (stats, eviction, image GC and
// the read-only port on; the secure port needs an API server).
func nodekitAgent(o options) agent {
	return agent{name: "nodekit", binary: o.nodekit, command: func(dir, manifests string, pods int) (*exec.Cmd, endpoints, error) {
		port, err := freePort()
		if err != nil {
			return nil, endpoints{}, err
		}
		cmd := exec.Command(o.nodekit, "run", "--runtime-endpoint="+o.endpoint, "--node-name=peerbench-nodekit",
			"--node-ip=127.0.0.1", "--manifests="+manifests, "--root-dir="+filepath.Join(dir, "root"),
			"--cgroup-root="+o.cgroupRoot, "--read-only-port="+strconv.Itoa(port), "--max-pods="+strconv.Itoa(maxPods(pods)),
			"--v=1")
		cmd.Args = append(cmd.Args, o.nodekitFlags...)
		if len(o.nodekitEnv) > 0 {
			cmd.Env = append(os.Environ(), o.nodekitEnv...)
		}
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		return cmd, endpoints{metrics: base + "/metrics", resource: base + "/metrics/resource"}, nil
	}}
}

// maxPods is both agents' pod limit: the kubelet's default 110, or the
// benchmark's pod count when it is larger (500 pods on one node).
func maxPods(pods int) int { return max(110, pods) }

// freePort returns a loopback TCP port nobody listens on now.
func freePort() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// freePorts returns n distinct loopback TCP ports nobody listens on now
// (all held open until every one is chosen, so no two are the same).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
