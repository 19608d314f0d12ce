package cri

import "github.com/nodekit/nodekit/internal/expansion"

// expand replaces each $(VAR) in s with lookup(VAR), as the kubelet does.
func expand(s string, lookup func(string) (string, bool)) string {
	return expansion.Expand(s, lookup)
}
