package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mode is one kind of simulated node: how its process starts and how its
// Nodes come to exist.
type mode struct {
	name   string
	prefix string
	// start starts the process that runs the nodes and makes the Nodes
	// exist; dir is the mode's work directory.
	start func(ctx context.Context, c *cluster, dir string, nodes []string) (*process, error)
}

// nodekitMode runs every node as a nodekit agent on the simulated runtime,
// in one child process (this binary's agents subcommand), each with its own
// client certificate.
func nodekitMode(o options) mode {
	return mode{name: "nodekit", prefix: "nk", start: func(ctx context.Context, c *cluster, dir string, nodes []string) (*process, error) {
		ca, err := loadAuthority(o.caCert, o.caKey)
		if err != nil {
			return nil, fmt.Errorf("the cluster CA: %w", err)
		}
		creds := filepath.Join(dir, "creds")
		if err := os.MkdirAll(creds, 0o700); err != nil {
			return nil, err
		}
		for _, n := range nodes {
			if _, err := ca.nodeKubeconfig(creds, o.server, n); err != nil {
				return nil, err
			}
		}
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, self, "agents", "--work="+dir, "--prefix=nk", "--nodes="+strconv.Itoa(len(nodes)),
			"--max-pods="+strconv.Itoa(max(110, o.podsPerNode)),
			"--cpuprofile="+filepath.Join(dir, "cpu.pprof"), "--heapprofile="+filepath.Join(dir, "heap.pprof"))
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		return startProcess(cmd, filepath.Join(dir, "agents.log"))
	}}
}

// kwokAnnotation is the annotation kwok is told to manage Nodes by.
const kwokAnnotation = "kwok.x-k8s.io/node"

// kwokMode runs kwok's controller with the stages kwokctl gives it by
// default (node-initialize, node-heartbeat-with-lease and the fast pod
// stages, installed beside the binary by hack/build-kwok.sh) and creates
// its fake Nodes.
func kwokMode(o options) mode {
	return mode{name: "kwok", prefix: "kwok", start: func(ctx context.Context, c *cluster, dir string, nodes []string) (*process, error) {
		stages, err := filepath.Glob(filepath.Join(filepath.Dir(o.kwok), "stages", "*.yaml"))
		if err != nil || len(stages) == 0 {
			return nil, fmt.Errorf("no kwok stages beside %s (hack/build-kwok.sh installs them): %v", o.kwok, err)
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, o.kwok, "--kubeconfig="+o.kubeconfig, "--config="+strings.Join(stages, ","),
			"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector="+kwokAnnotation+"=fake",
			"--node-lease-duration-seconds=40", "--cidr=10.128.0.0/12", "--node-ip=127.0.0.1",
			"--server-address=127.0.0.1:"+strconv.Itoa(port))
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		p, err := startProcess(cmd, filepath.Join(dir, "kwok.log"))
		if err != nil {
			return nil, err
		}
		if err := createKwokNodes(ctx, c, nodes); err != nil {
			p.stop()
			return nil, err
		}
		return p, nil
	}}
}

// createKwokNodes creates the fake Nodes through the uncounted client: in
// kwok mode these requests are the nodes' own cost (nodekit's agents create
// their Nodes themselves).
func createKwokNodes(ctx context.Context, c *cluster, nodes []string) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, 16)
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n,
				Labels:      map[string]string{modeLabel: "kwok", "type": "kwok", corev1.LabelHostname: n},
				Annotations: map[string]string{kwokAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"}}}
			if _, err := c.uncounted.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("create node %s: %w", n, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// freePort returns a loopback TCP port nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
