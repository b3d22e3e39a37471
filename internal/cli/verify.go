package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/combined"
	"github.com/memsched/memsched/verify/periodic"
	"github.com/memsched/memsched/verify/timed"
)

// VerifyOptions are the flags of `memsched verify`.
type VerifyOptions struct {
	Problem, ChainFile, Mem, Bandwidth, Schedule, Format string
	// GPUs, MicroBatches, Order and Algo describe a pipeline plan's instance (--problem
	// pipeline); a plan that is the pipeline command's JSON gives them by default.
	GPUs, MicroBatches int
	Order, Algo        string
	WeightFactor       float64
}

// Violation is the first rule a schedule breaks.
type Violation struct {
	// Step is the 0-based index of the operation (remat, remat-offload's ops; −1: the initial
	// state); Time the instant in seconds (weight offloading, offloading schedules). The text
	// output counts remat's steps from 1 (step 1 is the first operation of the sequence) and
	// writes remat-offload's indices as in the file, 0-based (ops[i], transfers[j]).
	Step   *int     `json:"step,omitempty"`
	Op     string   `json:"op,omitempty"`
	Time   *float64 `json:"time,omitempty"`
	Reason string   `json:"reason"`
}

// VerifyReport is the output of `memsched verify`.
type VerifyReport struct {
	Problem  string     `json:"problem"`
	Schedule string     `json:"schedule"`
	Format   string     `json:"format"`
	Budget   int64      `json:"budget"`
	Valid    bool       `json:"valid"`
	Makespan float64    `json:"makespan,omitempty"`
	Peak     int64      `json:"peak_memory,omitempty"`
	Verified bool       `json:"verified"`
	Error    *Violation `json:"violation,omitempty"`
}

// errRejected: the schedule was read and is invalid (exit status 1, the report printed).
var errRejected = errors.New("the schedule is invalid")

func newVerifyCmd(io *IO) *cobra.Command {
	o := &VerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify --problem remat|act-offload|weight-offload|remat-offload|pipeline --chain FILE --mem SIZE [--bandwidth RATE] --schedule FILE",
		Short: "Check a schedule produced by anyone; explain its first violation",
		Long: `verify replays a schedule with memsched's independent validators and prints its makespan (or
period) and peak memory, or the first rule it breaks with its step (remat) or time (weight
offloading). The schedule is memsched's own --json output (remat, offload-weights), a bare
JSON sequence or periodic schedule, or the plain text formats of docs/verify.md:
  remat           operations as in 004: Fck^1 Fn^2 Fall^3 B^3 ... (any spacing, # comments)
  weight-offload  period P / op F|B LAYER START / transfer offload|upload|prefetch LAYER START /
                  delete LAYER TIME / resident LAYER... / cpu-valid LAYER...
  act-offload     op F|B INDEX START / transfer offload|prefetch INDEX START (0-based, 001)
  remat-offload   JSON only: {"ops": [{"op", "stage", "wait"}], "transfers": [{"kind", "tensor",
                  "stage", "after"}]} (docs/verify.md), bare, under "schedule", or the one
                  result of memsched remat-offload --algo NAME --json
  pipeline        memsched pipeline --json (its best plan, or --algo NAME's; its --gpus,
                  --mem, --bandwidth, --micro-batches and schedule unless given), a plan
                  {"stages": [[1, 2], [3, 4]], "gpus", "sequences", "actions"} or the text
                  1-2 3-4 (parts FIRST-LAST[@GPU]); --order 1f1b|gpipe (docs/pipeline.md)
Exit status: 0 valid, 1 invalid (the violation is printed), 2 unreadable input.`,
		Example: `  memsched remat --mem 90MiB --algo floating --json > s.json
  memsched verify --problem remat --mem 90MiB --schedule s.json
  echo "Fall^1 Fall^2 Fall^3 Fall^4 Fall^5 Fall^6 Fall^7 B^7 B^6 B^5 B^4 B^3 B^2 B^1" |
    memsched verify --problem remat --mem 90MiB --schedule -
  memsched offload-weights --chain gpt2.json --mem 8GiB --bandwidth 12GB/s --json > w.json
  memsched verify --problem weight-offload --chain gpt2.json --mem 8GiB --bandwidth 12GB/s --schedule w.json
  memsched remat-offload --mem 80MiB --bandwidth 1GB/s --json > c.json
  memsched verify --problem remat-offload --mem 80MiB --bandwidth 1GB/s --schedule c.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runVerify(o, io) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Problem, "problem", "", "remat | act-offload | weight-offload | remat-offload")
	f.StringVar(&o.ChainFile, "chain", "", "chain file (memsched.chain/v1); default for remat: the built-in toy chain")
	f.StringVar(&o.Mem, "mem", "", "memory budget (remat: everything included; weight-offload: M_GPU)")
	f.StringVar(&o.Bandwidth, "bandwidth", "", "act-offload, weight-offload, remat-offload: link rate β, each direction (required; e.g. 12GB/s)")
	f.StringVar(&o.Schedule, "schedule", "", "schedule file, - for stdin")
	f.StringVar(&o.Format, "format", "auto", "auto | json | text")
	f.IntVar(&o.GPUs, "gpus", 0, "pipeline: P, the GPUs")
	f.IntVar(&o.MicroBatches, "micro-batches", 0, "pipeline: m, the micro-batches of one iteration")
	f.StringVar(&o.Order, "order", "", "pipeline: every GPU's order, 1f1b | gpipe (default 1f1b, or the report's)")
	f.StringVar(&o.Algo, "algo", "", "pipeline: the result of a pipeline report to check (default: its best)")
	f.Float64Var(&o.WeightFactor, "weight-factor", 0, "pipeline: multiply every stage's w (default 1, or the report's)")
	return cmd
}

func runVerify(o *VerifyOptions, io *IO) error {
	switch o.Problem {
	case "remat", "act-offload", "weight-offload", "remat-offload":
	case "pipeline":
		return runVerifyPipeline(o, io)
	case "":
		return usageErrorf("verify: --problem is required (remat, act-offload, weight-offload, remat-offload or pipeline)")
	default:
		return usageErrorf("verify: unknown --problem %q (want remat, act-offload, weight-offload, remat-offload or pipeline)", o.Problem)
	}
	if o.GPUs != 0 || o.MicroBatches != 0 || o.Order != "" || o.Algo != "" || o.WeightFactor != 0 {
		return usageErrorf("verify: --gpus, --micro-batches, --order, --algo and --weight-factor go with --problem pipeline only")
	}
	if o.Mem == "" {
		return usageErrorf("verify: --mem is required")
	}
	budget, err := budgetFlag("--mem", o.Mem)
	if err != nil {
		return err
	}
	if o.Format != "auto" && o.Format != "json" && o.Format != "text" {
		return usageErrorf("verify: --format must be auto, json or text, got %q", o.Format)
	}
	if o.Schedule == "" {
		return usageErrorf("verify: --schedule FILE is required (- for stdin)")
	}
	data, err := readInputFile("--schedule", o.Schedule, io.In)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return usageErrorf("--schedule %s: empty (no schedule)", o.Schedule)
	}
	format := scheduleFormat(o.Format, data)
	rep := VerifyReport{Problem: o.Problem, Schedule: o.Schedule, Format: format, Budget: budget}
	switch o.Problem {
	case "remat":
		err = verifyRemat(o, data, &rep)
	case "act-offload":
		err = verifyActs(o, data, &rep)
	case "remat-offload":
		err = verifyCombined(o, data, &rep)
	default:
		err = verifyWeights(o, data, &rep)
	}
	if err != nil {
		return err
	}
	if io.JSON {
		if err := io.PrintJSON(rep); err != nil {
			return err
		}
	} else if rep.Valid {
		fmt.Fprintf(io.Out, "valid: %s %s %s, peak %s (budget %s); verified by %s\n", o.Problem, measure(o.Problem),
			instances.FormatDuration(rep.Makespan), instances.FormatSize(rep.Peak), instances.FormatSize(budget), validator(o.Problem))
	} else {
		v := rep.Error
		where := ""
		switch {
		case v.Step != nil && *v.Step < 0:
			where = "before the first operation: "
		case v.Step != nil && o.Problem == "remat-offload":
			where = fmt.Sprintf("ops[%d] (%s): ", *v.Step, v.Op) // 0-based, as in the file and its wait/after
		case v.Step != nil:
			where = fmt.Sprintf("step %d (%s): ", *v.Step+1, v.Op)
		case v.Time != nil:
			where = fmt.Sprintf("t = %s (%.9g s): ", instances.FormatDuration(*v.Time), *v.Time)
			if v.Op != "" { // a transfer of a combined schedule
				where = v.Op + ", " + where
			}
		}
		fmt.Fprintf(io.Out, "invalid: %s%s\n", where, v.Reason)
	}
	if !rep.Valid {
		return errRejected
	}
	return nil
}

func measure(problem string) string { // the period for the periodic weight schedules
	if problem == "weight-offload" {
		return "period"
	}
	return "makespan"
}

func validator(problem string) string {
	switch problem {
	case "remat":
		return "verify.Remat (004 §3, SPEC §1)"
	case "act-offload":
		return "verify/timed (001 (A)–(E), SPEC §2)"
	case "remat-offload":
		return "verify/combined (strict timing, SPEC §6)"
	}
	return "verify/periodic (002 §3, SPEC §3)"
}

// verifyActs reads a timed activation-offloading schedule and checks it.
func verifyActs(o *VerifyOptions, data []byte, rep *VerifyReport) error {
	beta, err := bandwidthFlag(o.Bandwidth)
	if err != nil {
		return err
	}
	c, _, err := loadChain(o.ChainFile)
	if err != nil {
		return err
	}
	p, err := act.FromChain(c, rep.Budget, beta)
	if err != nil {
		return &UsageError{err}
	}
	var s *schedule.Timed
	if rep.Format == "json" {
		// memsched's output (the schedule under "schedule", other keys its own) or a bare
		// schedule; the schedule itself is read strictly (unknown fields refused).
		var obj struct {
			Schedule json.RawMessage `json:"schedule"`
			Ops      json.RawMessage `json:"ops"`
		}
		if err = json.Unmarshal(data, &obj); err == nil {
			s = &schedule.Timed{}
			switch {
			case present(obj.Schedule):
				err = strictJSON(obj.Schedule, s)
			case present(obj.Ops):
				err = strictJSON(data, s)
			default:
				err = errors.New(`neither a "schedule" key nor a timed schedule ("ops", "transfers")`)
			}
		}
	} else {
		s, err = schedule.ParseTimedText(bytes.NewReader(data))
	}
	if err != nil {
		return usageErrorf("--schedule %s: %v", o.Schedule, err)
	}
	r, err := timed.Check(p, s)
	var bad *timed.Violation
	switch {
	case errors.As(err, &bad):
		t := bad.Time
		rep.Error = &Violation{Time: &t, Reason: fmt.Sprintf("%s (rule %s)", bad.Msg, bad.Rule)}
		return nil
	case err != nil:
		return usageErrorf("--schedule %s: %v", o.Schedule, err)
	}
	rep.Valid, rep.Verified, rep.Makespan, rep.Peak = true, true, r.Makespan, r.Peak
	return nil
}

// verifyRemat reads a sequence and replays it.
func verifyRemat(o *VerifyOptions, data []byte, rep *VerifyReport) error {
	c, _, err := loadChain(o.ChainFile)
	if err != nil {
		return err
	}
	seq, err := parseSequence("--schedule", o.Schedule, data, rep.Format)
	if err != nil {
		return err
	}
	sim, err := verify.Remat(c, seq, verify.RematOptions{})
	var bad *verify.InvalidOpError
	switch {
	case errors.As(err, &bad):
		step := bad.Index
		v := &Violation{Step: &step, Reason: bad.Reason}
		if bad.Index < len(seq) {
			v.Op = seq[bad.Index].String()
		}
		rep.Error = v
		return nil
	case err != nil:
		return err
	}
	if i, mem, over := verify.FirstOverflow(c, seq, rep.Budget, verify.RematOptions{}); over {
		v := &Violation{Step: &i, Reason: fmt.Sprintf("memory overflow: %s (%d B) in use exceeds the budget %s (%d B)",
			instances.FormatSize(mem), mem, instances.FormatSize(rep.Budget), rep.Budget)}
		if i >= 0 {
			v.Op = seq[i].String()
		}
		rep.Error = v
		return nil
	}
	rep.Valid, rep.Verified, rep.Makespan, rep.Peak = true, true, sim.Makespan, sim.Peak
	return nil
}

// verifyWeights reads a periodic schedule and validates it.
func verifyWeights(o *VerifyOptions, data []byte, rep *VerifyReport) error {
	if o.ChainFile == "" {
		return usageErrorf("verify: --chain is required for weight-offload")
	}
	beta, err := bandwidthFlag(o.Bandwidth)
	if err != nil {
		return err
	}
	c, _, err := loadChain(o.ChainFile)
	if err != nil {
		return err
	}
	p, err := offload.FromChain(c, rep.Budget, beta)
	if err != nil {
		return &UsageError{err}
	}
	var s *schedule.Periodic
	if rep.Format == "json" {
		var obj struct {
			Schedule json.RawMessage `json:"schedule"`
			Period   *float64        `json:"period"`
			OpStart  []float64       `json:"op_start"`
		}
		if err = json.Unmarshal(data, &obj); err == nil {
			s = &schedule.Periodic{}
			switch {
			case present(obj.Schedule):
				err = strictJSON(obj.Schedule, s)
			case obj.Period != nil && obj.OpStart != nil:
				err = strictJSON(data, s)
			default:
				err = errors.New(`neither a "schedule" key (memsched offload-weights --json) nor a periodic schedule ("period", "op_start", ...)`)
			}
		}
	} else {
		s, err = schedule.ParsePeriodicText(bytes.NewReader(data), p.L())
	}
	if err != nil {
		return usageErrorf("--schedule %s: %v", o.Schedule, err)
	}
	r, err := periodic.Validate(p, s)
	var bad *periodic.Error
	switch {
	case errors.As(err, &bad):
		t := bad.Time
		rep.Error = &Violation{Time: &t, Reason: bad.Msg}
		return nil
	case err != nil:
		return usageErrorf("--schedule %s: %v", o.Schedule, err)
	}
	rep.Valid, rep.Verified, rep.Makespan, rep.Peak = true, true, r.Period, r.Peak
	return nil
}

// verifyCombined reads a combined schedule (JSON) and validates it under strict timing.
func verifyCombined(o *VerifyOptions, data []byte, rep *VerifyReport) error {
	if rep.Format != "json" {
		return usageErrorf("--schedule %s: remat-offload schedules are JSON (docs/verify.md)", o.Schedule)
	}
	beta, err := bandwidthFlag(o.Bandwidth)
	if err != nil {
		return err
	}
	c, _, err := loadChain(o.ChainFile)
	if err != nil {
		return err
	}
	var obj struct {
		Schedule  json.RawMessage `json:"schedule"`
		Ops       json.RawMessage `json:"ops"`
		Transfers json.RawMessage `json:"transfers"`
		Results   []struct {
			Schedule json.RawMessage `json:"schedule"`
		} `json:"results"`
	}
	s := &schedule.Combined{}
	if err = json.Unmarshal(data, &obj); err == nil {
		switch {
		case present(obj.Schedule):
			err = strictJSON(obj.Schedule, s)
		case present(obj.Ops):
			err = strictJSON(data, s)
		case len(obj.Results) == 1 && present(obj.Results[0].Schedule):
			err = strictJSON(obj.Results[0].Schedule, s)
		case len(obj.Results) > 1:
			err = fmt.Errorf("%d results: keep one (e.g. jq '.results[0].schedule', or --algo NAME)", len(obj.Results))
		default:
			err = errors.New(`neither a combined schedule ("ops", "transfers"), a "schedule" key nor one result with a schedule`)
		}
	}
	if err != nil {
		return usageErrorf("--schedule %s: %v", o.Schedule, err)
	}
	r, err := combined.Check(c, rep.Budget, beta, s)
	var bad *combined.Violation
	switch {
	case errors.As(err, &bad):
		t := bad.Time
		v := &Violation{Time: &t, Reason: fmt.Sprintf("%s (rule %s)", bad.Msg, bad.Rule)}
		if bad.Op >= 0 {
			step := bad.Op
			v.Step, v.Op = &step, s.Ops[bad.Op].Op.String()
		} else if bad.Transfer >= 0 {
			v.Op = fmt.Sprintf("transfers[%d] (%s of %v)", bad.Transfer, s.Transfers[bad.Transfer].Kind, s.Transfers[bad.Transfer].Tensor)
		}
		rep.Error = v
		return nil
	case err != nil:
		return usageErrorf("--schedule %s: %v", o.Schedule, err)
	}
	rep.Valid, rep.Verified, rep.Makespan, rep.Peak = true, true, r.Makespan, r.Peak
	return nil
}
