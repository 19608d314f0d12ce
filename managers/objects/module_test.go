package objects

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestModuleProvidesTheDefaultsOnlyWithAClient(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client kubernetes.Interface
	}{{"with a client", fake.NewClientset()}, {"standalone", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				m  Manager
				tm TokenManager
				sl ServiceLister
			)
			app := fxtest.New(t,
				fx.NopLogger,
				fx.Provide(func() kubernetes.Interface { return tc.client }),
				fx.Provide(func() clock.WithTicker { return clocktesting.NewFakeClock(epoch) }),
				fx.Supply(logr.Discard()),
				Module,
				fx.Populate(&m, &tm, &sl),
			)
			app.RequireStart().RequireStop()
			want := tc.client != nil
			if (m != nil) != want || (tm != nil) != want || (sl != nil) != want {
				t.Errorf("Manager %v, TokenManager %v, ServiceLister %v; want each present = %v", m, tm, sl, want)
			}
			if want {
				if _, ok := m.(*WatchManager); !ok {
					t.Errorf("Manager is %T, want *WatchManager", m)
				}
			}
		})
	}
}
