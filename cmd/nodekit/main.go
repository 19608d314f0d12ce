// Command nodekit is the ready-made node agent built from nodekit's default
// subsystems: `nodekit run` runs static pods from a manifest directory on a
// CRI runtime and serves their status over HTTP.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "nodekit:", err)
		os.Exit(1)
	}
}
