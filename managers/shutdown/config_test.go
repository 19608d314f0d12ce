package shutdown

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"the zero value is valid and off", Config{}, ""},
		{"a total with a critical share is valid", Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second}, ""},
		{"the critical share may be the whole period", Config{GracePeriod: 10 * time.Second, GracePeriodCriticalPods: 10 * time.Second}, ""},
		{"a negative period is refused", Config{GracePeriod: -time.Second}, "shutdownGracePeriod -1s must be >= 0"},
		{"a critical share above the total is refused", Config{GracePeriod: 10 * time.Second, GracePeriodCriticalPods: 20 * time.Second},
			"shutdownGracePeriodCriticalPods 20s must be <= shutdownGracePeriod 10s"},
		{"a critical share without a total is refused", Config{GracePeriodCriticalPods: time.Second},
			"shutdownGracePeriodCriticalPods 1s must be <= shutdownGracePeriod 0s"},
		{"priority groups and periods together are refused",
			Config{GracePeriod: time.Second, GracePeriodByPodPriority: []PriorityGracePeriod{{Priority: 0, GracePeriodSeconds: 1}}},
			"cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod"},
		{"a negative group period is refused", Config{GracePeriodByPodPriority: []PriorityGracePeriod{{Priority: 5, GracePeriodSeconds: -1}}},
			"priority 5: shutdownGracePeriodSeconds -1 must be >= 0"},
		{"a priority twice is refused", Config{GracePeriodByPodPriority: []PriorityGracePeriod{{Priority: 5}, {Priority: 5}}},
			"priority 5 appears twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.cfg.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConfigGroups(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		want []Group
	}{
		{"off without a period", Config{}, nil},
		{"the two periods become the regular and critical groups",
			Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second},
			[]Group{{Priority: 0, GracePeriodSeconds: 20}, {Priority: SystemCriticalPriority, GracePeriodSeconds: 10}}},
		{"no critical share leaves the critical group no time",
			Config{GracePeriod: 30 * time.Second},
			[]Group{{Priority: 0, GracePeriodSeconds: 30}, {Priority: SystemCriticalPriority, GracePeriodSeconds: 0}}},
		{"periods are truncated to seconds",
			Config{GracePeriod: 2500 * time.Millisecond, GracePeriodCriticalPods: 1200 * time.Millisecond},
			[]Group{{Priority: 0, GracePeriodSeconds: 1}, {Priority: SystemCriticalPriority, GracePeriodSeconds: 1}}},
		{"priority groups are sorted lowest first",
			Config{GracePeriodByPodPriority: []PriorityGracePeriod{{Priority: 100000, GracePeriodSeconds: 5}, {Priority: -10, GracePeriodSeconds: 7}}},
			[]Group{{Priority: -10, GracePeriodSeconds: 7}, {Priority: 100000, GracePeriodSeconds: 5}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.cfg.Groups(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Groups() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
