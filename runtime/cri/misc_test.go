package cri

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	cases := []struct{ name, in, want string }{
		{"plain text is unchanged", "hello", "hello"},
		{"a defined variable is replaced", "x=$(A)", "x=1"},
		{"several variables are replaced", "$(A)-$(B)", "1-two"},
		{"an empty variable expands to nothing", "[$(EMPTY)]", "[]"},
		{"an undefined variable stays literal", "$(NOPE)", "$(NOPE)"},
		{"a doubled dollar escapes a reference", "$$(A)", "$(A)"},
		{"a doubled dollar alone is one dollar", "cost $$5", "cost $5"},
		{"a dollar before another character is kept", "$A and $", "$A and $"},
		{"an unterminated reference stays literal", "$(A", "$(A"},
		{"a reference name runs to the first closing parenthesis", "$($(A)", "$($(A)"},
		{"a trailing dollar is kept", "end$", "end$"},
		{"three dollars escape one and expand the rest", "$$$(A)", "$1"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := expand(tt.in, lookup); got != tt.want {
				t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"an instance ID is enough", Config{InstanceID: "n"}, ""},
		{"a missing instance ID is refused", Config{}, "InstanceID must be set"},
		{"a systemd slice parent is refused", Config{InstanceID: "n", CgroupParent: "kubepods.slice"}, "systemd slice"},
		{"a relative root dir is refused", Config{InstanceID: "n", RootDir: "var/lib"}, "absolute"},
		{"a negative backoff is refused", Config{InstanceID: "n", MaxBackOff: -time.Second}, "MaxBackOff must not be negative"},
		{"an initial backoff above the max is refused", Config{InstanceID: "n", InitialBackOff: time.Hour, MaxBackOff: time.Minute}, "exceeds MaxBackOff"},
		{"a bad node IP is refused", Config{InstanceID: "n", NodeIPs: []string{"not-an-ip"}}, "NodeIPs"},
		{"a full config is valid", Config{InstanceID: "n", RootDir: "/x", CgroupParent: "/nk", NodeIPs: []string{"192.0.2.1", "2001:db8::1"}}, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	got := Config{InstanceID: "n"}.withDefaults()
	want := Config{InstanceID: "n", RootDir: "/var/lib/nodekit", InitialBackOff: 10 * time.Second, MaxBackOff: 300 * time.Second,
		BackOffResetAfter: 600 * time.Second, MinimumKillGracePeriod: 2 * time.Second, ResolvConf: "/etc/resolv.conf"}
	if got.RootDir != want.RootDir || got.InitialBackOff != want.InitialBackOff || got.MaxBackOff != want.MaxBackOff ||
		got.BackOffResetAfter != want.BackOffResetAfter || got.MinimumKillGracePeriod != want.MinimumKillGracePeriod || got.ResolvConf != want.ResolvConf {
		t.Errorf("withDefaults() = %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestParseResolvConf(t *testing.T) {
	got := parseResolvConf([]byte("; comment\nnameserver 1.1.1.1 # trailing\nsearch a b\nsearch c\ndomain x\noptions ndots:1 edns0\nnameserver\n"))
	if strings.Join(got.Servers, ",") != "1.1.1.1" || strings.Join(got.Searches, ",") != "c" || strings.Join(got.Options, ",") != "ndots:1,edns0" {
		t.Errorf("parsed %+v", got)
	}
}
