package main

import (
	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "nodekit",
		Short:         "nodekit is a Kubernetes node agent built as a library",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newRunCommand(), newRuntimeSimCommand())
	return root
}
