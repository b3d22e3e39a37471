package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
)

func newVersionCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the memsched version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if io.JSON {
				return io.PrintJSON(map[string]string{"version": Version, "go": runtime.Version(), "minplus_kernel": dp.MinPlusKernel()})
			}
			_, err := fmt.Fprintf(io.Out, "memsched %s (%s; C_MP min-plus kernel: %s)\n", Version, runtime.Version(), dp.MinPlusKernel())
			return err
		},
	}
}
