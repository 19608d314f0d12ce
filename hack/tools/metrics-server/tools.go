//go:build tools

// Package tools pins metrics-server's command so that `go mod tidy` keeps
// its dependencies in this module's go.sum.
package tools

import _ "sigs.k8s.io/metrics-server/cmd/metrics-server"
