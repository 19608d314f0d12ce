package nodeip

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeHost is a Host whose answers the test sets, counting calls.
type fakeHost struct {
	mu        sync.Mutex
	dns       map[string][]net.IP
	dnsErr    error
	ifaces    []net.Addr
	route     net.IP
	routeErr  error
	lookups   int
	routeAsks int
}

func (h *fakeHost) LookupIP(_ context.Context, name string) ([]net.IP, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lookups++
	if h.dnsErr != nil {
		return nil, h.dnsErr
	}
	if ips, ok := h.dns[name]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func (h *fakeHost) InterfaceAddrs() ([]net.Addr, error) { return h.ifaces, nil }

func (h *fakeHost) DefaultRouteIP() (net.IP, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.routeAsks++
	return h.route, h.routeErr
}

func ipNet(s string) net.Addr { return &net.IPNet{IP: net.ParseIP(s), Mask: net.CIDRMask(24, 32)} }

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestDetectorOrder(t *testing.T) {
	t.Parallel()
	noRoute := errors.New("no default routes found")
	for _, tc := range []struct {
		name string
		cfg  Config
		host *fakeHost
		want string
	}{
		{
			name: "the configured node IP wins and nothing is read",
			cfg:  Config{NodeIPs: []string{"127.0.0.1"}, NodeName: "n"},
			host: &fakeHost{route: net.ParseIP("10.0.0.5")},
			want: "127.0.0.1",
		},
		{
			name: "a hostname that is an IP is the address",
			cfg:  Config{NodeName: "n", Hostname: "192.0.2.7"},
			host: &fakeHost{route: net.ParseIP("10.0.0.5")},
			want: "192.0.2.7",
		},
		{
			name: "the node name's IPv4 address on an interface comes before the default route",
			cfg:  Config{NodeName: "n"},
			host: &fakeHost{
				dns:    map[string][]net.IP{"n": {net.ParseIP("2001:db8::9"), net.ParseIP("10.1.0.9")}},
				ifaces: []net.Addr{ipNet("10.1.0.9"), ipNet("2001:db8::9")},
				route:  net.ParseIP("10.0.0.5"),
			},
			want: "10.1.0.9",
		},
		{
			name: "an IPv6 address is taken when the name has no valid IPv4 one",
			cfg:  Config{NodeName: "n"},
			host: &fakeHost{
				dns:    map[string][]net.IP{"n": {net.ParseIP("127.0.1.1"), net.ParseIP("2001:db8::9")}},
				ifaces: []net.Addr{ipNet("2001:db8::9")},
				route:  net.ParseIP("10.0.0.5"),
			},
			want: "2001:db8::9",
		},
		{
			name: "a loopback or foreign resolution falls back to the default route",
			cfg:  Config{NodeName: "n"},
			host: &fakeHost{
				dns:    map[string][]net.IP{"n": {net.ParseIP("127.0.1.1"), net.ParseIP("198.51.100.1")}},
				ifaces: []net.Addr{ipNet("10.0.0.5")},
				route:  net.ParseIP("10.0.0.5"),
			},
			want: "10.0.0.5",
		},
		{
			name: "an unresolvable name falls back to the default route",
			cfg:  Config{NodeName: "n"},
			host: &fakeHost{route: net.ParseIP("10.0.0.5")},
			want: "10.0.0.5",
		},
		{
			name: "a name resolving on a machine without default route still works",
			cfg:  Config{NodeName: "n"},
			host: &fakeHost{
				dns:      map[string][]net.IP{"n": {net.ParseIP("10.1.0.9")}},
				ifaces:   []net.Addr{ipNet("10.1.0.9")},
				routeErr: noRoute,
			},
			want: "10.1.0.9",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := NewDetector(tc.host, testingclock.NewFakePassiveClock(t0), testr.New(t), tc.cfg)
			got, err := d.NodeIPs()
			if err != nil {
				t.Fatalf("NodeIPs: %v", err)
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("NodeIPs = %v, want [%s]", got, tc.want)
			}
		})
	}
}

func TestDetectorCachesSuccess(t *testing.T) {
	t.Parallel()
	h := &fakeHost{route: net.ParseIP("10.0.0.5")}
	d := NewDetector(h, testingclock.NewFakePassiveClock(t0), testr.New(t), Config{NodeName: "n"})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if ips, err := d.NodeIPs(); err != nil || ips[0] != "10.0.0.5" {
				t.Errorf("NodeIPs = %v, %v", ips, err)
			}
		})
	}
	wg.Wait()
	ips, _ := d.NodeIPs()
	ips[0] = "mutated" // the caller owns the slice
	if again, _ := d.NodeIPs(); again[0] != "10.0.0.5" {
		t.Fatalf("a caller's change leaked into the cache: %v", again)
	}
	if h.lookups != 1 || h.routeAsks != 1 {
		t.Fatalf("detection ran %d lookups and %d route reads, want 1 each", h.lookups, h.routeAsks)
	}
}

func TestDetectorFailureIsClearAndRetried(t *testing.T) {
	t.Parallel()
	h := &fakeHost{routeErr: errors.New("no default routes found in /proc/net/route")}
	clk := testingclock.NewFakePassiveClock(t0)
	d := NewDetector(h, clk, testr.New(t), Config{NodeName: "n", RetryInterval: time.Minute})
	_, err := d.NodeIPs()
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("NodeIPs error = %v, want ErrUnknown", err)
	}
	for _, part := range []string{`node name "n"`, "no such host", "no default routes"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if _, err := d.NodeIPs(); err == nil || h.routeAsks != 1 {
		t.Fatalf("within the retry interval: err %v, %d route reads; want the kept error and 1 read", err, h.routeAsks)
	}
	h.mu.Lock()
	h.route, h.routeErr = net.ParseIP("10.0.0.5"), nil
	h.mu.Unlock()
	clk.SetTime(t0.Add(time.Minute))
	if ips, err := d.NodeIPs(); err != nil || ips[0] != "10.0.0.5" {
		t.Fatalf("after the retry interval: %v, %v; want [10.0.0.5]", ips, err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ips []string
		ok  bool
	}{
		{nil, true},
		{[]string{"127.0.0.1"}, true},
		{[]string{"10.0.0.1", "2001:db8::1"}, true},
		{[]string{"10.0.0.1", "10.0.0.2"}, false},
		{[]string{"not-an-ip"}, false},
		{[]string{"0.0.0.0"}, false},
		{[]string{"10.0.0.1", "2001:db8::1", "10.0.0.2"}, false},
	} {
		if err := (Config{NodeIPs: tc.ips}).Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%v) = %v, want ok=%v", tc.ips, err, tc.ok)
		}
	}
}

func TestStatic(t *testing.T) {
	t.Parallel()
	if _, err := Static(nil).NodeIPs(); !errors.Is(err, ErrUnknown) {
		t.Fatalf("empty Static: %v, want ErrUnknown", err)
	}
	if ips, err := (Static{"10.0.0.1"}).NodeIPs(); err != nil || ips[0] != "10.0.0.1" {
		t.Fatalf("Static: %v, %v", ips, err)
	}
}
