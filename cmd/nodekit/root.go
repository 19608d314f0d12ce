package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newRootCommand is nodekit's command line: run and runtime-sim, and
// --version. The version is printed by nodekit, not through cobra's
// version template: any template cobra is given links text/template's
// reflective method calls, and with them the linker keeps every exported
// method of every type used through an interface (about 20 MiB of the
// binary's mapped sections; docs/benchmarks.md).
func newRootCommand() *cobra.Command {
	var version bool
	root := &cobra.Command{
		Use:           "nodekit",
		Short:         "nodekit is a Kubernetes node agent built as a library",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if version {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), versionString())
				return err
			}
			return cmd.Help()
		},
	}
	root.Flags().BoolVarP(&version, "version", "v", false, "print the Kubernetes version nodekit implements and exit")
	root.AddCommand(newRunCommand(), newRuntimeSimCommand())
	return root
}
