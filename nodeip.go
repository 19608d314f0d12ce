package nodekit

import (
	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/managers/nodeip"
)

// nodeIPWiring provides the one nodeip.Source that every reader of the
// node's addresses uses: the agent's pod status (hostIP(s), and podIP(s)
// of hostNetwork pods), the container environment (status.hostIP(s)) and
// the node status reporter (the Node's InternalIP addresses), so they
// agree; the runtime's and the node status reporter's constructors take
// it. Embedders may replace or decorate the nodeip.Source.
func nodeIPWiring() fx.Option {
	return fx.Provide(newNodeIPs)
}

// nodeIPConfig is the node IP detector's share of the settings: the
// runtime's NodeIPs when set, else the agent's NodeIP; detection when
// neither is.
func (c Config) nodeIPConfig() nodeip.Config {
	cfg := nodeip.Config{NodeName: c.NodeName}
	switch {
	case len(c.CRI.NodeIPs) > 0:
		cfg.NodeIPs = c.CRI.NodeIPs
	case c.Agent.NodeIP != "":
		cfg.NodeIPs = []string{c.Agent.NodeIP}
	}
	return cfg
}

type nodeIPParams struct {
	fx.In

	Cfg   Config
	Clock clock.Clock
	Log   logr.Logger
	// Host is what detection reads; the machine the agent runs on
	// (nodeip.OSHost) unless an embedder supplies one.
	Host nodeip.Host `optional:"true"`
}

// newNodeIPs is the default nodeip.Source: a Detector over the machine
// the agent runs on. It does no I/O; the first reader detects.
func newNodeIPs(p nodeIPParams) nodeip.Source {
	return nodeip.NewDetector(p.Host, p.Clock, p.Log, p.Cfg.nodeIPConfig())
}
