package cli

import (
	"fmt"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// exportProblems are the models `memsched export --problem` writes.
var exportProblems = []string{"weight-offload-lb", "remat-ilp", "act-offload", "remat-offload"}

// ExportReport is what `memsched export --json` prints: the file written and the model's size
// and units (the objective times Units.Time is the value in seconds).
type ExportReport struct {
	File      string `json:"file"`
	Problem   string `json:"problem"`
	Format    string `json:"format"`
	Variables int    `json:"variables"`
	Rows      int    `json:"rows"`
	Nonzeros  int    `json:"nonzeros"`
	Units     struct {
		// Memory is bytes per model unit of memory, Time seconds per model unit of time.
		Memory float64 `json:"memory_bytes"`
		Time   float64 `json:"time_seconds"`
	} `json:"units"`
}

// checkExportFlags checks --format and -o, the flags both export paths share.
func checkExportFlags(format, out string) error {
	if format != "lp" && format != "mps" {
		return usageErrorf("export: --format must be lp or mps, got %q", format)
	}
	if out == "" {
		return usageErrorf("export: -o FILE is required")
	}
	return nil
}

// writeModelFile writes m to out in format (lp or mps), says so on stderr and, with --json,
// prints an ExportReport. A path that cannot be created is a usage error naming -o.
func writeModelFile(io *IO, problem, format, out string, m *model.Model, units milp.Units) error {
	f, err := createOutput("-o", out)
	if err != nil {
		return err
	}
	if format == "lp" {
		err = lpfile.Write(f, m)
	} else {
		err = mpsfile.Write(f, m)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(io.ErrOut, "memsched: wrote %s (%d variables, %d rows, %d nonzeros; %s)\n", out, m.NumVars(), m.NumRows(), m.NumNonzeros(), units.Comment())
	if !io.JSON {
		return nil
	}
	rep := ExportReport{File: out, Problem: problem, Format: format, Variables: m.NumVars(), Rows: m.NumRows(), Nonzeros: m.NumNonzeros()}
	rep.Units.Memory, rep.Units.Time = units.Memory, units.Time
	return io.PrintJSON(rep)
}
