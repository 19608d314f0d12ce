package server_test

import (
	"net/http"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/nodekit/nodekit/server"
)

func TestModuleCollectsHealthChecksFromTheGroup(t *testing.T) {
	var srv *server.Server
	app := fxtest.New(t,
		server.Module,
		fx.NopLogger,
		fx.Supply(logr.Discard(), server.Config{}),
		fx.Provide(
			func() server.PodLister { return podList{runningPod("web")} },
			func() prometheus.Gatherer { return prometheus.NewRegistry() },
			server.AsHealthCheck(func() check { return check{name: "syncloop"} }),
			server.AsHealthCheck(func() check { return failing("pleg", "stuck") }),
		),
		fx.Populate(&srv),
	)
	app.RequireStart().RequireStop()

	h := srv.Handler()
	tests := []struct {
		path     string
		wantCode int
	}{
		{"/healthz/syncloop", http.StatusOK},
		{"/healthz/pleg", http.StatusInternalServerError},
		{"/pods", http.StatusOK},
		{"/metrics", http.StatusOK},
	}
	for _, tt := range tests {
		if rec := get(t, h, http.MethodGet, tt.path); rec.Code != tt.wantCode {
			t.Errorf("GET %s = %d, want %d", tt.path, rec.Code, tt.wantCode)
		}
	}
}

func TestModuleWorksWithoutHealthChecks(t *testing.T) {
	var srv *server.Server
	app := fxtest.New(t,
		server.Module,
		fx.NopLogger,
		fx.Supply(logr.Discard(), server.Config{}),
		fx.Provide(
			func() server.PodLister { return podList(nil) },
			func() prometheus.Gatherer { return prometheus.NewRegistry() },
		),
		fx.Populate(&srv),
	)
	app.RequireStart().RequireStop()
	if rec := get(t, srv.Handler(), http.MethodGet, "/healthz"); rec.Code != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200", rec.Code)
	}
}
