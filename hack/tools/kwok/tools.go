//go:build tools

// Package tools pins kwok's controller command so that `go mod tidy` keeps
// its dependencies in this module's go.sum.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
