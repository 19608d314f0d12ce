package nodekit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/agent"
	"github.com/nodekit/nodekit/managers/nodestatus"
)

// confinement wires what resource admission and RuntimeClasses need: the
// node's allocatable resources for the agent, and a client-backed
// RuntimeClassGetter for the runtime.
func confinement() fx.Option {
	return fx.Options(
		fx.Provide(nodeResources, runtimeClassGetter),
	)
}

type nodeResourcesParams struct {
	fx.In

	Machine  nodestatus.MachineInfo `optional:"true"`
	Config   nodestatus.Config
	Pressure *pressureRef `optional:"true"`
	Shutdown *shutdownRef `optional:"true"`
	Clock    clock.Clock  `optional:"true"`
}

// nodeResources adapts the MachineInfo; nil (no resource admission) when
// an embedder left it out.
func nodeResources(p nodeResourcesParams) agent.NodeResources {
	if p.Machine == nil {
		return nil
	}
	clk := p.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &machineResources{m: p.Machine, cfg: p.Config, pressure: p.Pressure, shutdown: p.Shutdown, clk: clk}
}

// clientSecrets reads Secrets from the API server; under the Node
// authorizer a node may read those its pods reference.
type clientSecrets struct {
	client kubernetes.Interface
}

// GetSecret implements cri.SecretGetter.
func (c clientSecrets) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s, err := c.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", namespace, name, err)
	}
	return s, nil
}

// allocatableTTL is how long machineResources serves the machine's
// capacity before reading it again: Info reads files, statfs and routes,
// and Allocatable is asked for on every admission, every downward API
// resource and every memory-backed volume set-up.
const allocatableTTL = time.Minute

// machineResources is the node's allocatable resources as the node status
// reports them: the machine's capacity less the reserved resources and the
// hard eviction thresholds, read at most once per allocatableTTL; a failed
// read is not kept.
type machineResources struct {
	m        nodestatus.MachineInfo
	cfg      nodestatus.Config
	pressure *pressureRef // nil: no admission under pressure
	shutdown *shutdownRef // nil: no admission by the shutdown manager
	clk      clock.Clock

	mu    sync.Mutex
	alloc corev1.ResourceList
	read  time.Time
}

// AdmitUnderPressure implements agent.PressureAdmitter with the eviction
// manager's conditions, then the shutdown manager's refusal of every pod
// while the node shuts down.
func (r *machineResources) AdmitUnderPressure(pod *corev1.Pod) (string, string, bool) {
	if reason, message, ok := r.pressure.admit(pod); !ok {
		return reason, message, false
	}
	return r.shutdown.admit(pod)
}

// Allocatable implements agent.NodeResources. It returns a copy the caller
// may change.
func (r *machineResources) Allocatable() (corev1.ResourceList, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clk.Now()
	if r.alloc != nil && now.Sub(r.read) < allocatableTTL {
		return r.alloc.DeepCopy(), nil
	}
	info, err := r.m.Info()
	if err != nil {
		return nil, fmt.Errorf("read machine info: %w", err)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(info.NumCPU), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(info.MemoryBytes, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(info.EphemeralStorageBytes, resource.BinarySI),
	}
	for name, q := range info.HugePages {
		capacity[name] = q
	}
	r.alloc = nodestatus.Allocatable(capacity, r.cfg.Reserved, r.cfg.EvictionHard)
	r.read = now
	return r.alloc.DeepCopy(), nil
}
