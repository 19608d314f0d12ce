//go:build tools

// Package tools records the commands hack/build-control-plane.sh builds
// (kube-apiserver, etcd, and kubectl for the e2e tests), so
// that `go mod tidy` keeps their modules in this tools module's go.mod. It is
// never compiled: the build tag excludes it, and both imports are main
// packages.
package tools

import (
	// etcd's server module has its main package at the module root.
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
