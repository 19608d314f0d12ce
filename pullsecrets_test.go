package nodekit

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodekit/nodekit/managers/nodestatus"
)

func TestPullSecretsAreReadThroughTheClientWhenOneIsConfigured(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "reg"}, Type: corev1.SecretTypeDockerConfigJson}
	if g := pullSecrets(objectsParams{}); g != nil {
		t.Fatal("a SecretGetter was provided without a Kubernetes client")
	}
	g := pullSecrets(objectsParams{Client: fake.NewClientset(secret)})
	if g == nil {
		t.Fatal("no SecretGetter was provided with a Kubernetes client")
	}
	got, err := g.GetSecret(context.Background(), "ns", "reg")
	if err != nil || got.Name != "reg" {
		t.Fatalf("GetSecret = %v, %v", got, err)
	}
	if _, err := g.GetSecret(context.Background(), "ns", "missing"); err == nil {
		t.Fatal("GetSecret of a missing secret succeeded")
	}
}

type fakeMachine struct {
	info *nodestatus.Machine
	err  error
}

func (f fakeMachine) Info() (*nodestatus.Machine, error) { return f.info, f.err }
func (f fakeMachine) Usage() (*nodestatus.Usage, error)  { return &nodestatus.Usage{}, nil }

func TestNodeResourcesAreTheMachinesCapacity(t *testing.T) {
	if nodeResources(nodeResourcesParams{}) != nil {
		t.Fatal("node resources without a MachineInfo, want none (no resource admission)")
	}
	r := nodeResources(nodeResourcesParams{Machine: fakeMachine{info: &nodestatus.Machine{NumCPU: 2, MemoryBytes: 1 << 30, EphemeralStorageBytes: 10 << 30}}})
	alloc, err := r.Allocatable()
	if err != nil {
		t.Fatal(err)
	}
	if alloc.Cpu().MilliValue() != 2000 || alloc.Memory().Value() != 1<<30 || alloc.StorageEphemeral().Value() != 10<<30 {
		t.Errorf("allocatable %v", alloc)
	}
	reserved := nodeResources(nodeResourcesParams{
		Machine: fakeMachine{info: &nodestatus.Machine{NumCPU: 2, MemoryBytes: 1 << 30, EphemeralStorageBytes: 10 << 30}},
		Config:  Config{KubeReserved: map[string]string{"cpu": "500m"}, SystemReserved: map[string]string{"memory": "100Mi", "cpu": "250m"}}.nodeStatusConfig(),
	})
	if alloc, err = reserved.Allocatable(); err != nil {
		t.Fatal(err)
	}
	// 2 cpu - 750m; 1Gi - 100Mi system - 100Mi memory.available; 10Gi - 10% nodefs.available.
	if alloc.Cpu().MilliValue() != 1250 || alloc.Memory().Value() != 824<<20 || alloc.StorageEphemeral().Value() != 9<<30 {
		t.Errorf("allocatable with reservations %v", alloc)
	}
	if _, err := nodeResources(nodeResourcesParams{Machine: fakeMachine{err: errors.New("no /proc")}}).Allocatable(); err == nil {
		t.Error("an unreadable machine gave no error")
	}
}

// countingMachine counts the reads of the machine's info.
type countingMachine struct {
	fakeMachine
	reads *int
}

func (c countingMachine) Info() (*nodestatus.Machine, error) {
	*c.reads++
	return c.fakeMachine.Info()
}

func TestNodeResourcesReadTheMachineOncePerMinute(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	reads := 0
	m := countingMachine{fakeMachine{info: &nodestatus.Machine{NumCPU: 2, MemoryBytes: 1 << 30}}, &reads}
	r := nodeResources(nodeResourcesParams{Machine: m, Clock: clk})
	for i := 0; i < 3; i++ {
		alloc, err := r.Allocatable()
		if err != nil || alloc.Cpu().Value() != 2 {
			t.Fatalf("Allocatable = %v, %v", alloc, err)
		}
		delete(alloc, corev1.ResourceCPU) // the caller's copy
	}
	if reads != 1 {
		t.Fatalf("%d machine reads for 3 calls within a minute, want 1", reads)
	}
	clk.Step(time.Minute)
	if _, err := r.Allocatable(); err != nil || reads != 2 {
		t.Fatalf("after a minute: %d reads (err %v), want 2", reads, err)
	}
}
