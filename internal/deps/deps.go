// Package deps pins the module's dependencies while packages are written in
// parallel; it is removed once every dependency is imported for real.
package deps

import (
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/go-logr/logr"
	_ "github.com/go-logr/logr/funcr"
	_ "github.com/go-logr/logr/testr"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/fx"
	_ "go.uber.org/fx/fxtest"
	_ "go.uber.org/fx/fxevent"
	_ "go.uber.org/goleak"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/util/validation"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/util/flowcontrol"
	_ "k8s.io/client-go/tools/record"
	_ "k8s.io/component-helpers/apimachinery/lease"
	_ "k8s.io/cri-api/pkg/apis/testing"
	_ "k8s.io/cri-client/pkg"
	_ "k8s.io/klog/v2"
	_ "k8s.io/utils/clock/testing"
	_ "sigs.k8s.io/yaml"
	_ "k8s.io/apimachinery/pkg/util/dump"
	_ "k8s.io/apimachinery/pkg/util/strategicpatch"
)
