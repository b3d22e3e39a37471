package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	// Quiet turns progress bars off (global --quiet); they are off anyway when stderr is not
	// a terminal.
	Quiet bool
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
	// exitInternal is a bug caught in a command (a Go panic): sysexits.h's EX_SOFTWARE, never
	// mistaken for bad input. A crash the command cannot catch (a panic on another goroutine,
	// a signal in C code, the runtime out of memory) aborts the process with SIGABRT (shell
	// status 134; cmd/memsched sets the traceback level "crash"), never Go's default 2.
	exitInternal = 70
	// exitInterrupted is 128 + SIGINT, as shells report a command stopped by Ctrl-C.
	exitInterrupted = 130
)

// interruptGrace is how long Main waits for a command to wrap up after SIGINT (write its
// completed rows) before it returns exitInterrupted regardless: some computations (a DP
// table) cannot stop midway, and Ctrl-C must answer within a second.
const interruptGrace = 800 * time.Millisecond

// NewRootCmd builds the command tree writing through io.
func NewRootCmd(io *IO) *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:   "memsched",
		Short: "Memory-constrained training schedules with certified bounds",
		Long: `memsched finds fast schedules for training deep networks under a GPU memory budget
(rematerialization, activation and weight offloading) and certifies them against lower bounds:
which strategy, how fast, and how far from the best possible.`,
		Example: `  memsched gen zoo resnet --depth 101 --batch 32 -o r101.json
  memsched certify --chain r101.json --mem 2GiB --bandwidth 12GB/s      # every lever, every bound
  memsched sweep --chain r101.json --from 1GiB --to 6GiB --steps 20 -o out/   # CSV, JSON, plots
  memsched remat --chain r101.json --mem 2GiB --algo floating --json > s.json
  memsched verify --problem remat --chain r101.json --mem 2GiB --schedule s.json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelDebug
			}
			io.Log = slog.New(slog.NewTextHandler(io.ErrOut, &slog.HandlerOptions{Level: level}))
			if err := checkEmptyFlags(cmd); err != nil {
				return err
			}
			if f := cmd.Flags().Lookup("max-memory"); f != nil {
				if b, err := sizeFlag("--max-memory", f.Value.String()); err == nil {
					applyMemoryLimit(b) // a bad value is the command's to report
				}
			}
			return nil
		},
	}
	root.SetHelpCommand(newHelpCmd(root))
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.PersistentFlags().BoolVar(&io.JSON, "json", false, "machine-readable JSON output")
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log progress to stderr")
	root.PersistentFlags().BoolVarP(&io.Quiet, "quiet", "q", false, "no progress bars on stderr")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &UsageError{err} })
	root.AddCommand(
		newVersionCmd(io),
		newInfoCmd(io),
		newRematAllCmd(io),
		newSolveCmd(io),
		newGenCmd(io),
		newCertifyCmd(io),
		newSweepCmd(io),
		newVerifyCmd(io),
		newOffloadWeightsCmd(io),
		newOffloadActCmd(io),
		newBoundCmd(io),
		withPipelineExport(newExportAllCmd(io), io),
		newRematGraphCmd(io),
		newPipelineCmd(io),
		newRematOffloadCmd(io),
	)
	return root
}

// checkEmptyFlags refuses a string flag given with an empty value (--chain ""): left out, a
// flag takes its default; given empty, it would silently mean the same (the built-in chain for
// an empty --chain), which is never what was meant.
func checkEmptyFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err == nil && f.Value.Type() == "string" && f.Value.String() == "" {
			err = usageErrorf("--%s: empty value (leave the flag out for its default)", f.Name)
		}
	})
	return err
}

// newHelpCmd is cobra's help command, except that help on a command that does not exist is
// bad input (exit 2), not a usage text with exit status 0.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help prints the help of any command, e.g. memsched help certify.",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usageErrorf("help: unknown command %q (memsched help lists the commands)", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}

// Main runs the CLI with args and returns the exit status. Errors are printed as one line on
// stderr; bad input exits 2, other failures 1.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	iox := &IO{In: in, Out: out, ErrOut: errOut, Log: slog.New(slog.DiscardHandler)}
	root := NewRootCmd(iox)
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	done := make(chan int, 1)
	go func() { done <- execute(ctx, root, errOut) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
		select {
		case code := <-done:
			return code
		case <-time.After(interruptGrace):
			fmt.Fprintln(errOut, "memsched: interrupted")
			return exitInterrupted
		}
	}
}

// execute runs root and returns its exit status. A Go panic in the command is a bug, not bad
// input: it is printed (message and stack) and exits exitInternal.
func execute(ctx context.Context, root *cobra.Command, errOut io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(errOut, "memsched: internal error (a bug; please report it with the command line): %v\n%s", r, debug.Stack())
			code = exitInternal
		}
	}()
	return exitCode(root.ExecuteContext(ctx), errOut)
}

// exitCode maps an error to an exit status and prints it; the one place that decides.
func exitCode(err error, errOut io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errRejected) {
		return exitError // the report says why
	}
	if errors.Is(err, errInterrupted) || errors.Is(err, context.Canceled) {
		fmt.Fprintln(errOut, "memsched: interrupted")
		return exitInterrupted
	}
	fmt.Fprintln(errOut, "memsched: "+oneLine(err.Error()))
	var ue *UsageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitError
}

// oneLine folds a multi-line message (cobra's "Did you mean this?" suggestions) into one line.
func oneLine(msg string) string {
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 2 && lines[1] == "Did you mean this?" {
		return lines[0] + " (did you mean " + strings.Join(lines[2:], " or ") + "?)"
	}
	return strings.Join(lines, "; ")
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
