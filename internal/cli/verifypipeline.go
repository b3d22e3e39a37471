package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// PipelineVerifyReport is the output of `memsched verify --problem pipeline`.
type PipelineVerifyReport struct {
	Problem  string     `json:"problem"`
	Schedule string     `json:"schedule"`
	Format   string     `json:"format"`
	Stages   [][2]int   `json:"stages"`
	GPUOf    []int      `json:"gpu_of_part"`
	Valid    bool       `json:"valid"`
	Makespan float64    `json:"makespan,omitempty"`
	Period   *float64   `json:"period,omitempty"`
	Peak     []int64    `json:"peak_memory,omitempty"`
	Budget   int64      `json:"budget"`
	Verified bool       `json:"verified"`
	Error    *Violation `json:"violation,omitempty"`
}

// planFile is the simple JSON plan format of docs/pipeline.md: the parts' stages, optionally
// their GPUs (default: part k on GPU k), their sequences (default: store everything) and each
// GPU's actions (default: the named schedule's order).
type planFile struct {
	Stages    [][2]int            `json:"stages"`
	GPUs      []int               `json:"gpus"`
	Sequences []schedule.Sequence `json:"sequences"`
	Actions   [][]schedule.Action `json:"actions"`
}

// runVerifyPipeline checks a pipeline plan: the pipeline command's --json output (the result
// of --algo, else its best), a plan JSON, or the text form "1-2 3-4" (parts, each
// FIRST-LAST[@GPU]).
func runVerifyPipeline(o *VerifyOptions, io *IO) error {
	if o.Schedule == "" {
		return usageErrorf("verify: --schedule FILE is required (the plan; - for stdin)")
	}
	data, err := readInputFile("--schedule", o.Schedule, io.In)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return usageErrorf("--schedule %s: empty (no plan)", o.Schedule)
	}
	format := scheduleFormat(o.Format, data)
	plan, defaults, err := readPlan(o, data, format)
	if err != nil {
		return err
	}
	// The command's JSON carries its instance: flags not given take its values.
	gpus, mem, bw, m, order, wf := o.GPUs, o.Mem, o.Bandwidth, o.MicroBatches, o.Order, o.WeightFactor
	if defaults != nil {
		if wf == 0 && defaults.WeightFactor > 0 {
			wf = defaults.WeightFactor
		}
		if gpus == 0 {
			gpus = defaults.GPUs
		}
		if mem == "" {
			mem = strconv.FormatInt(defaults.Memory, 10)
		}
		if bw == "" {
			bw = "inf"
			if defaults.Bandwidth != nil {
				bw = strconv.FormatFloat(*defaults.Bandwidth, 'g', -1, 64) + "B/s"
			}
		}
		if m == 0 {
			m = defaults.MicroBatches
		}
		if order == "" {
			order = defaults.Schedule
		}
	}
	if order == "" {
		order = "1f1b"
	}
	if wf == 0 {
		wf = 1
	}
	p, _, err := pipelineProblem("verify", o.ChainFile, gpus, mem, bw, m, order, wf)
	if err != nil {
		return err
	}
	rep := PipelineVerifyReport{Problem: "pipeline", Schedule: o.Schedule, Format: format, Budget: p.Memory}
	for _, pt := range plan.Parts {
		rep.Stages = append(rep.Stages, [2]int{pt.First, pt.Last})
		rep.GPUOf = append(rep.GPUOf, pt.GPU)
	}
	res, err := vpl.Replay(p, plan)
	if err != nil {
		rep.Error = &Violation{Reason: err.Error()}
	} else if !res.Fits() {
		t := res.Violation.Time
		rep.Error = &Violation{Time: &t, Op: res.Violation.OpText, Reason: res.Violation.Error()}
		rep.Makespan, rep.Peak = res.Makespan, res.Peak
	} else {
		rep.Valid, rep.Verified, rep.Makespan, rep.Peak = true, true, res.Makespan, res.Peak
		if !math.IsNaN(res.Period) {
			v := res.Period
			rep.Period = &v
		}
	}
	if io.JSON {
		if err := io.PrintJSON(rep); err != nil {
			return err
		}
	} else if rep.Valid {
		var peak int64
		for _, x := range rep.Peak {
			peak = max(peak, x)
		}
		period := ""
		if rep.Period != nil {
			period = ", period " + instances.FormatDuration(*rep.Period)
		}
		fmt.Fprintf(io.Out, "valid: pipeline makespan %s%s, peak %s on the fullest GPU (budget %s each); verified by verify/pipeline (SPEC §7)\n",
			instances.FormatDuration(rep.Makespan), period, instances.FormatSize(peak), instances.FormatSize(p.Memory))
	} else {
		fmt.Fprintf(io.Out, "invalid: %s\n", rep.Error.Reason)
	}
	if !rep.Valid {
		return errRejected
	}
	return nil
}

// readPlan parses the plan in any of its forms; defaults is the pipeline report the plan came
// from (nil for the other forms).
func readPlan(o *VerifyOptions, data []byte, format string) (*schedule.Pipeline, *PipelineReport, error) {
	bad := func(format string, args ...any) error {
		return usageErrorf("--schedule %s: "+format, append([]any{o.Schedule}, args...)...)
	}
	if format == "text" {
		plan := &schedule.Pipeline{}
		for i, tok := range strings.Fields(stripComments(string(data))) {
			iv, gpu, hasGPU := strings.Cut(tok, "@")
			a, b, ok := strings.Cut(iv, "-")
			first, err1 := strconv.Atoi(a)
			last, err2 := strconv.Atoi(b)
			if !ok || err1 != nil || err2 != nil {
				return nil, nil, bad("part %d: %q is not FIRST-LAST[@GPU] (e.g. 1-2 3-4)", i, tok)
			}
			g := i
			if hasGPU {
				var err error
				if g, err = strconv.Atoi(gpu); err != nil {
					return nil, nil, bad("part %d: GPU %q of %q is not an integer", i, gpu, tok)
				}
			}
			plan.Parts = append(plan.Parts, schedule.Part{First: first, Last: last, GPU: g})
		}
		return plan, nil, nil
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, nil, bad("invalid JSON: %v", err)
	}
	if _, ok := probe["results"]; ok {
		var rep PipelineReport
		if err := json.Unmarshal(data, &rep); err != nil {
			return nil, nil, bad("not a pipeline report: %v", err)
		}
		want := o.Algo
		if want == "" {
			want = rep.Best
		}
		for _, r := range rep.Results {
			if r.Algo != want || len(r.Stages) == 0 {
				continue
			}
			plan := &schedule.Pipeline{Actions: r.Actions}
			for k, s := range r.Stages {
				pt := schedule.Part{First: s[0], Last: s[1], GPU: k}
				if k < len(r.GPUs) {
					pt.GPU = r.GPUs[k] // a non-contiguous plan
				}
				if k < len(r.Sequences) {
					pt.Sequence = r.Sequences[k]
				}
				plan.Parts = append(plan.Parts, pt)
			}
			return plan, &rep, nil
		}
		if want == "" {
			return nil, nil, bad("the report has no feasible plan; give --algo NAME to check one that does not fit")
		}
		return nil, nil, bad("the report has no plan of algorithm %q", want)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var pf planFile
	if err := dec.Decode(&pf); err != nil {
		return nil, nil, bad("not a plan (want {\"stages\": [[1, 2], [3, 4]], ...}, docs/pipeline.md): %v", err)
	}
	if len(pf.Stages) == 0 {
		return nil, nil, bad("stages: no parts")
	}
	if pf.GPUs != nil && len(pf.GPUs) != len(pf.Stages) {
		return nil, nil, bad("gpus: %d entries for %d parts", len(pf.GPUs), len(pf.Stages))
	}
	if pf.Sequences != nil && len(pf.Sequences) != len(pf.Stages) {
		return nil, nil, bad("sequences: %d entries for %d parts", len(pf.Sequences), len(pf.Stages))
	}
	plan := &schedule.Pipeline{Actions: pf.Actions}
	for k, s := range pf.Stages {
		pt := schedule.Part{First: s[0], Last: s[1], GPU: k}
		if pf.GPUs != nil {
			pt.GPU = pf.GPUs[k]
		}
		if pf.Sequences != nil {
			pt.Sequence = pf.Sequences[k]
		}
		plan.Parts = append(plan.Parts, pt)
	}
	return plan, nil, nil
}

// stripComments drops '#' comments from each line.
func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "#")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
