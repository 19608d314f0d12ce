package nodekit

import (
	"go.uber.org/fx"

	"github.com/nodekit/nodekit/managers/stats"
	"github.com/nodekit/nodekit/runtime/cri"
	"github.com/nodekit/nodekit/server"
)

// statsConfig is the stats provider's share of the settings: the node, the
// agent's instance, its root and pod logs dirs and, with the cgroupfs driver, the pod
// cgroups' root.
func (c Config) statsConfig() stats.Config {
	sc := stats.Config{NodeName: c.NodeName, InstanceID: c.InstanceID, RootDir: c.RootDir, PodLogsDir: c.PodLogsDir}
	if c.CRI.CgroupDriver == "" || c.CRI.CgroupDriver == cri.CgroupDriverCgroupfs {
		sc.CgroupRoot = c.CRI.CgroupParent
	}
	return sc
}

type statsRoutesParams struct {
	fx.In

	Server *server.Server       `optional:"true"`
	Secure *server.SecureServer `optional:"true"`
	Stats  stats.Provider       `optional:"true"`
}

// serveStats adds /stats/summary and /metrics/resource to the read-only
// and secure servers when a stats provider is in the app.
func serveStats(p statsRoutesParams) {
	if p.Stats == nil {
		return
	}
	if p.Server != nil {
		p.Server.ServeStats(p.Stats)
	}
	if p.Secure != nil {
		p.Secure.ServeStats(p.Stats)
	}
}
