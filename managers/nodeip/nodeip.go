package nodeip

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrUnknown is wrapped by the error a Source returns when it knows no
// address for the node.
var ErrUnknown = errors.New("the node's IP address is unknown")

// Source gives the node's IP addresses.
type Source interface {
	// NodeIPs returns the node's IP addresses, primary first (at most one
	// per family). It may block on the first call (a DNS lookup, bounded
	// by a timeout) and is safe for concurrent use. The caller owns the
	// slice. The error wraps ErrUnknown when no address is known; its
	// message says what was tried.
	NodeIPs() ([]string, error)
}

// Static is a Source with fixed addresses.
type Static []string

var _ Source = Static(nil)

// NodeIPs implements Source: a copy of s, or an error wrapping ErrUnknown
// when s is empty.
func (s Static) NodeIPs() ([]string, error) {
	if len(s) == 0 {
		return nil, fmt.Errorf("%w: none configured", ErrUnknown)
	}
	return append([]string(nil), s...), nil
}

// validateConfigured checks addresses given by the user: IPs, at most
// two, and of different families when two (a dual-stack node). A loopback
// address is accepted (a single-machine node).
func validateConfigured(ips []string) error {
	if len(ips) > 2 {
		return fmt.Errorf("nodeip: at most two node IPs (one per family), got %d", len(ips))
	}
	var fams []bool
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return fmt.Errorf("nodeip: node IP %q is not an IP address", s)
		}
		if a.IsUnspecified() || a.IsMulticast() {
			return fmt.Errorf("nodeip: node IP %q cannot be a node's address", s)
		}
		fams = append(fams, a.Unmap().Is4())
	}
	if len(fams) == 2 && fams[0] == fams[1] {
		return fmt.Errorf("nodeip: two node IPs must be one IPv4 and one IPv6, got %q", ips)
	}
	return nil
}
