package nodestatus_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/nodestatus"
	noderuntime "github.com/nodekit/nodekit/runtime"
)

type machine struct{}

func (machine) Info() (*nodestatus.Machine, error) {
	return &nodestatus.Machine{NumCPU: 2, MemoryBytes: 4 << 30, EphemeralStorageBytes: 20 << 30, OSImage: "Example OS"}, nil
}

func (machine) Usage() (*nodestatus.Usage, error) {
	return &nodestatus.Usage{MemoryAvailableBytes: 2 << 30}, nil
}

type containerd struct{}

func (containerd) Version(context.Context) (*noderuntime.VersionInfo, error) {
	return &noderuntime.VersionInfo{RuntimeName: "containerd", RuntimeVersion: "v2.4.2"}, nil
}

type healthy struct{}

func (healthy) Ready() error { return nil }

// A Reporter registers its node; here the API server is a fake clientset.
func ExampleNew() {
	client := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	w, _ := client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})

	r := nodestatus.New(client, machine{}, containerd{}, healthy{},
		testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), logr.Discard(),
		nodestatus.Config{NodeName: "node-1", NodeIP: "127.0.0.1"})
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()

	node := (<-w.ResultChan()).Object.(*corev1.Node)
	w.Stop()
	cancel()
	<-done

	fmt.Println(node.Name, node.Labels["kubernetes.io/os"], node.Status.Addresses[0].Address)
	fmt.Println(node.Status.NodeInfo.ContainerRuntimeVersion, node.Status.NodeInfo.KubeletVersion)
	for _, c := range node.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason)
	}
	// Output:
	// node-1 linux 127.0.0.1
	// containerd://2.4.2 v1.37.2+nodekit
	// MemoryPressure False KubeletHasSufficientMemory
	// DiskPressure False KubeletHasNoDiskPressure
	// PIDPressure False KubeletHasSufficientPID
	// Ready True KubeletReady
}
