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
	// command returns the agent's command for root directory dir,
	// manifest directory manifests and pods pods, and the URL of its
	// /metrics; it may write files under dir.
	command func(dir, manifests string, pods int) (*exec.Cmd, string, error)
}

// kubeletAgent is the upstream kubelet with the settings a standalone
// kubelet needs on these machines (cgroup v1, cgroupfs, no swap check, no
// API server; anonymous access to its port on loopback, for /metrics) and
// its defaults otherwise: stats, eviction, image and container GC all run
// as they do on a node.
func kubeletAgent(o options) agent {
	return agent{name: "kubelet", command: func(dir, manifests string, pods int) (*exec.Cmd, string, error) {
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		healthz, err := freePort()
		if err != nil {
			return nil, "", err
		}
		cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %s
containerRuntimeEndpoint: %s
staticPodPath: %s
address: 127.0.0.1
port: %d
readOnlyPort: 0
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
`, o.cgroupRoot, o.endpoint, manifests, port, healthz, maxPods(pods))
		path := filepath.Join(dir, "kubelet-config.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			return nil, "", err
		}
		return exec.Command(o.kubelet, "--config="+path, "--root-dir="+filepath.Join(dir, "root"),
			"--hostname-override=peerbench-kubelet", "--v=1"), fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil
	}}
}

// nodekitAgent is nodekit with its defaults (stats, eviction, image GC and
// the read-only port on; the secure port needs an API server).
func nodekitAgent(o options) agent {
	return agent{name: "nodekit", command: func(dir, manifests string, pods int) (*exec.Cmd, string, error) {
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		cmd := exec.Command(o.nodekit, "run", "--runtime-endpoint="+o.endpoint, "--node-name=peerbench-nodekit",
			"--node-ip=127.0.0.1", "--manifests="+manifests, "--root-dir="+filepath.Join(dir, "root"),
			"--cgroup-root="+o.cgroupRoot, "--read-only-port="+strconv.Itoa(port), "--max-pods="+strconv.Itoa(maxPods(pods)),
			"--v=1")
		if len(o.nodekitEnv) > 0 {
			cmd.Env = append(os.Environ(), o.nodekitEnv...)
		}
		return cmd, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), nil
	}}
}

// maxPods is both agents' pod limit: the kubelet's default 110, or the
// benchmark's pod count when it is larger (500 pods on one node).
func maxPods(pods int) int { return max(110, pods) }

// freePort returns a loopback TCP port nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
