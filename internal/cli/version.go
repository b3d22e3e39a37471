package cli

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/milp"
)

// milpNote says what a binary without the cgo backends cannot certify: the MILP bounds beyond
// the pure-Go referee's reach (memsched_torch's wheel carries such a binary).
func milpNote(backends []string) string {
	for _, b := range backends {
		if b == "highs" || b == "lpsolve" {
			return ""
		}
	}
	return "built without HiGHS and lp_solve (CGO_ENABLED=0): the MILP bounds and strategies " +
		"(act-offload's 002 MILP and relaxation, remat's ILP, remat-offload's relaxation MILP, " +
		"weight-offload's MILP) run on the pure-Go referee only, which gives up beyond small models " +
		"and then prints no bound; the dynamic programs, exhaustive searches, closed-form bounds and " +
		"every verified schedule are unaffected (make build has both backends)"
}

func newVersionCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the memsched version and the MILP backends it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			backends := milp.Available()
			note := milpNote(backends)
			if io.JSON {
				out := map[string]any{"version": Version, "go": runtime.Version(), "minplus_kernel": dp.MinPlusKernel(),
					"milp_backends": backends}
				if note != "" {
					out["milp_note"] = note
				}
				return io.PrintJSON(out)
			}
			_, err := fmt.Fprintf(io.Out, "memsched %s (%s; C_MP min-plus kernel: %s; MILP backends: %s)\n", Version,
				runtime.Version(), dp.MinPlusKernel(), strings.Join(backends, ", "))
			if err == nil && note != "" {
				_, err = fmt.Fprintf(io.Out, "note: %s\n", note)
			}
			return err
		},
	}
}
