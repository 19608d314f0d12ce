package nodekit

import (
	"testing"

	"github.com/nodekit/nodekit/server"
)

func TestDefaultConfigKeepsTheReadOnlyPortClosed(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.Server.Port != 0 || cfg.Server.SecurePort != server.DefaultSecurePort {
		t.Fatalf("read-only port %d, secure port %d; want 0 (off, as the kubelet's readOnlyPort default) and %d",
			cfg.Server.Port, cfg.Server.SecurePort, server.DefaultSecurePort)
	}
}
