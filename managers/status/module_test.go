package status

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

func TestModule(t *testing.T) {
	tests := []struct {
		name       string
		withClient bool
	}{
		{name: "without a client the manager is standalone and there is no mirror client"},
		{name: "with a client both are built", withClient: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				fx.In
				Manager Manager
				Mirror  MirrorClient
			}
			opts := []fx.Option{
				fx.NopLogger,
				fx.Supply(fx.Annotate(clocktesting.NewFakeClock(epoch), fx.As(new(clock.WithTicker)))),
				fx.Supply(logr.Discard()),
				fx.Supply(Config{NodeName: "node1"}),
				Module,
				fx.Populate(&got),
			}
			if tt.withClient {
				opts = append(opts, fx.Supply(fx.Annotate(fake.NewClientset(), fx.As(new(kubernetes.Interface)))))
			}
			fxtest.New(t, opts...).RequireStart().RequireStop()
			sm, ok := got.Manager.(*StatusManager)
			if !ok {
				t.Fatalf("Manager is %T, want *StatusManager", got.Manager)
			}
			if (sm.client != nil) != tt.withClient || (got.Mirror != nil) != tt.withClient {
				t.Fatalf("client set = %v, mirror client = %v; want both %v", sm.client != nil, got.Mirror, tt.withClient)
			}
		})
	}
}
