package nodeip

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/clock"
)

// Config holds the Detector's settings. The zero value detects.
type Config struct {
	// NodeIPs are the node's addresses as the user gave them (--node-ip),
	// primary first, at most one per family. A loopback address is
	// accepted. Defaults to none: the address is detected.
	NodeIPs []string `json:"nodeIPs,omitempty"`
	// NodeName is the name looked up in DNS during detection. Defaults to
	// "" (no lookup).
	NodeName string `json:"nodeName,omitempty"`
	// Hostname is the node's hostname; detection uses it as the address
	// when it is an IP address. Defaults to NodeName.
	Hostname string `json:"hostname,omitempty"`
	// RetryInterval is how long a failed detection stands before a call
	// detects again. Defaults to 10s.
	RetryInterval time.Duration `json:"retryInterval,omitempty"`
	// LookupTimeout bounds the DNS lookup of NodeName. Defaults to 2s.
	LookupTimeout time.Duration `json:"lookupTimeout,omitempty"`
}

func (c Config) withDefaults() Config {
	if c.Hostname == "" {
		c.Hostname = c.NodeName
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = 10 * time.Second
	}
	if c.LookupTimeout == 0 {
		c.LookupTimeout = 2 * time.Second
	}
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if err := validateConfigured(c.NodeIPs); err != nil {
		return err
	}
	if c.RetryInterval < 0 || c.LookupTimeout < 0 {
		return fmt.Errorf("nodeip: retryInterval and lookupTimeout must not be negative")
	}
	return nil
}

// Host is what detection reads from the machine. OSHost reads the real
// one; tests give their own.
type Host interface {
	// LookupIP resolves name.
	LookupIP(ctx context.Context, name string) ([]net.IP, error)
	// InterfaceAddrs lists the addresses of the host's interfaces.
	InterfaceAddrs() ([]net.Addr, error)
	// DefaultRouteIP returns the address of the default route's interface.
	DefaultRouteIP() (net.IP, error)
}

// OSHost is the Host of the machine the agent runs on.
type OSHost struct{}

var _ Host = OSHost{}

// LookupIP implements Host with the default resolver.
func (OSHost) LookupIP(ctx context.Context, name string) ([]net.IP, error) {
	return net.DefaultResolver.LookupIP(ctx, "ip", name)
}

// InterfaceAddrs implements Host with net.InterfaceAddrs.
func (OSHost) InterfaceAddrs() ([]net.Addr, error) { return net.InterfaceAddrs() }

// DefaultRouteIP implements Host with utilnet.ChooseHostInterface, as the
// kubelet does.
func (OSHost) DefaultRouteIP() (net.IP, error) { return utilnet.ChooseHostInterface() }

// Detector is the default Source: the configured addresses, else the
// detected one. See the package documentation for the detection order.
type Detector struct {
	host Host
	clk  clock.PassiveClock
	log  logr.Logger
	cfg  Config

	mu       sync.Mutex // held during detection: concurrent callers share it
	ips      []string   // set once detection succeeds
	err      error      // the last failure, kept until failedAt+RetryInterval
	failedAt time.Time
}

var _ Source = (*Detector)(nil)

// NewDetector returns a Detector reading host (OSHost when nil). It does no
// I/O: detection happens on the first NodeIPs call. Call cfg.Validate
// first; configured addresses are not checked again.
func NewDetector(host Host, clk clock.PassiveClock, log logr.Logger, cfg Config) *Detector {
	if host == nil {
		host = OSHost{}
	}
	return &Detector{host: host, clk: clk, log: log.WithName("nodeip"), cfg: cfg.withDefaults()}
}

// NodeIPs implements Source. The configured addresses are returned without
// I/O. Otherwise the first call detects (blocking up to LookupTimeout on
// DNS); a detected address is kept for the Detector's life, a failure for
// RetryInterval, and logged once per failure streak.
func (d *Detector) NodeIPs() ([]string, error) {
	if len(d.cfg.NodeIPs) > 0 {
		return append([]string(nil), d.cfg.NodeIPs...), nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ips != nil {
		return append([]string(nil), d.ips...), nil
	}
	if d.err != nil && d.clk.Since(d.failedAt) < d.cfg.RetryInterval {
		return nil, d.err
	}
	ip, how, err := d.detect()
	if err != nil {
		if d.err == nil {
			d.log.Error(err, "cannot detect the node IP: pods get no hostIP and the Node no InternalIP until it is found; set the node IP to fix", "node", d.cfg.NodeName)
		}
		d.err, d.failedAt = err, d.clk.Now()
		return nil, err
	}
	d.ips, d.err = []string{ip.String()}, nil
	d.log.Info("detected the node IP", "nodeIP", d.ips[0], "from", how)
	return append([]string(nil), d.ips...), nil
}

// detect follows the kubelet's order: the hostname as an IP, the node
// name in DNS, the default route's interface.
func (d *Detector) detect() (net.IP, string, error) {
	if ip := net.ParseIP(d.cfg.Hostname); ip != nil {
		return ip, "hostname", nil
	}
	var dnsErr error
	if d.cfg.NodeName != "" {
		ip, err := d.lookup()
		if err == nil {
			return ip, "dns", nil
		}
		dnsErr = fmt.Errorf("node name %q: %w", d.cfg.NodeName, err)
	}
	ip, err := d.host.DefaultRouteIP()
	if err == nil && ip != nil {
		return ip, "defaultRoute", nil
	}
	if err == nil {
		err = fmt.Errorf("no address")
	}
	if dnsErr != nil {
		return nil, "", fmt.Errorf("%w: %v; default route: %v", ErrUnknown, dnsErr, err)
	}
	return nil, "", fmt.Errorf("%w: default route: %v", ErrUnknown, err)
}

// lookup returns the first valid address NodeName resolves to, IPv4
// preferred, as the kubelet picks it.
func (d *Detector) lookup() (net.IP, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.LookupTimeout)
	defer cancel()
	addrs, err := d.host.LookupIP(ctx, d.cfg.NodeName)
	if err != nil {
		return nil, err
	}
	var v6 net.IP
	err = fmt.Errorf("resolves to no address")
	for _, a := range addrs {
		if err = d.validate(a); err != nil {
			continue
		}
		if a.To4() != nil {
			return a, nil
		}
		if v6 == nil {
			v6 = a
		}
	}
	if v6 != nil {
		return v6, nil
	}
	return nil, err
}

// validate is the kubelet's check of a resolved node IP: a unicast,
// non-loopback, non-link-local address of one of the host's interfaces.
func (d *Detector) validate(ip net.IP) error {
	switch {
	case ip.IsLoopback():
		return fmt.Errorf("%s is a loopback address", ip)
	case ip.IsMulticast(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsUnspecified():
		return fmt.Errorf("%s cannot be a node's address", ip)
	}
	addrs, err := d.host.InterfaceAddrs()
	if err != nil {
		return fmt.Errorf("list interface addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return nil
		}
		if n, ok := a.(*net.IPAddr); ok && n.IP.Equal(ip) {
			return nil
		}
	}
	return fmt.Errorf("%s is not an address of this host's interfaces", ip)
}
