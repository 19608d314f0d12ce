package main

import (
	"strings"
	"testing"
	"time"
)

func TestShutdownFlagsAndFileFields(t *testing.T) {
	o, err := parse(t, "shutdownGracePeriodCriticalPods: 10s\n", "--shutdown-grace-period", "30s")
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.config()
	if cfg.Shutdown.GracePeriod != 30*time.Second || cfg.Shutdown.GracePeriodCriticalPods != 10*time.Second {
		t.Fatalf("shutdown config %+v, want 30s and 10s", cfg.Shutdown)
	}
	off, err := parse(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c := off.config().Shutdown; c.GracePeriod != 0 || c.GracePeriodCriticalPods != 0 {
		t.Errorf("default shutdown config %+v, want off", c)
	}
}

func TestShutdownCriticalShareAboveTheTotalIsRefused(t *testing.T) {
	o, err := parse(t, "", "--shutdown-grace-period", "5s", "--shutdown-grace-period-critical-pods", "10s")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := o.config().Complete()
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "shutdownGracePeriodCriticalPods 10s must be <= shutdownGracePeriod 5s") {
		t.Errorf("Validate = %v", err)
	}
}

func TestShutdownByPodPriorityIsNotAFlagOrFileField(t *testing.T) {
	_, err := parse(t, "shutdownGracePeriodByPodPriority: []\n")
	if err == nil || !strings.Contains(err.Error(), `"shutdownGracePeriodByPodPriority"`) {
		t.Errorf("err = %v, want the field refused by name (the library's Config.Shutdown takes it)", err)
	}
}
