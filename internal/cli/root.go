package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// Version is the memsched version, set at build time with -ldflags "-X ...cli.Version=...".
var Version = "0.1.0-dev"

// IO carries the streams and global flags every command writes through.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// JSON selects machine-readable output (global --json).
	JSON bool
	// Log is the structured logger (to ErrOut; --verbose raises its level).
	Log *slog.Logger
}

// PrintJSON writes v as indented JSON followed by a newline.
func (o *IO) PrintJSON(v any) error {
	enc := json.NewEncoder(o.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// UsageError is bad input from the user (flags, files, values): exit status 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usageErrorf builds a UsageError.
func usageErrorf(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the command could not complete (solver failure, I/O)
	exitUsage = 2 // bad input
)

// NewRootCmd builds the command tree writing through io.
func NewRootCmd(io *IO) *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:           "memsched",
		Short:         "Memory-constrained training schedules with certified bounds",
		Long:          "memsched finds fast schedules for training deep networks under a GPU memory budget\n(rematerialization, activation and weight offloading) and certifies them against lower bounds.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelDebug
			}
			io.Log = slog.New(slog.NewTextHandler(io.ErrOut, &slog.HandlerOptions{Level: level}))
		},
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.PersistentFlags().BoolVar(&io.JSON, "json", false, "machine-readable JSON output")
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log progress to stderr")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &UsageError{err} })
	root.AddCommand(
		newVersionCmd(io),
		newInfoCmd(io),
		newRematAllCmd(io),
		newSolveCmd(io),
		newGenCmd(io),
		newCertifyCmd(io),
		newOffloadWeightsCmd(io),
		newBoundCmd(io),
		newExportAllCmd(io),
		newRematGraphCmd(io),
	)
	return root
}

// Main runs the CLI with args and returns the exit status. Errors are printed as one line on
// stderr; bad input exits 2, other failures 1.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	iox := &IO{In: in, Out: out, ErrOut: errOut, Log: slog.New(slog.DiscardHandler)}
	root := NewRootCmd(iox)
	root.SetArgs(args)
	err := root.Execute()
	return exitCode(err, errOut)
}

// exitCode maps an error to an exit status and prints it; the one place that decides.
func exitCode(err error, errOut io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(errOut, "memsched: "+err.Error())
	var ue *UsageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitError
}

// isCobraUsage recognizes cobra's own argument errors (unknown command, wrong arg count).
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "accepts ", "requires ", "invalid argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
