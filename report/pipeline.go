package report

import (
	"fmt"
	"math"
	"time"

	pl "github.com/memsched/memsched/instances/pipeline"
	leverpl "github.com/memsched/memsched/lever/pipeline"
)

// PipelineRow is one strategy's answer at one GPU count of a pipeline sweep.
type PipelineRow struct {
	Algo     string  `json:"algo"`
	Feasible bool    `json:"feasible"`
	Makespan float64 `json:"makespan,omitempty"`
	// Parts is the number of GPUs the plan uses; Optimal the exact search's proof.
	Parts   int     `json:"parts,omitempty"`
	Optimal bool    `json:"optimal,omitempty"`
	Seconds float64 `json:"seconds"`
	Reason  string  `json:"reason,omitempty"`
}

// PipelinePoint is one GPU count of a pipeline sweep, with its best certified lower bound.
type PipelinePoint struct {
	GPUs        int           `json:"gpus"`
	Rows        []PipelineRow `json:"results"`
	Bound       float64       `json:"bound"`
	BoundName   string        `json:"bound_name"`
	CertifiedBy string        `json:"certified_by"`
}

// PipelineSweepResult is a sweep of the pipeline lever over the number of GPUs.
type PipelineSweepResult struct {
	Chain        string          `json:"chain"`
	MicroBatches int             `json:"micro_batches"`
	Memory       int64           `json:"memory"`
	Schedule     string          `json:"schedule"`
	Points       []PipelinePoint `json:"points"`
}

// PipelineSweep runs every pipeline strategy on p with P' = 1..p.GPUs GPUs. Each point gets an
// equal share of the time left to o.Deadline (none: no limit), spent as leverpl.RunAll spends
// it (on a 2001-stage chain with recomputation the baselines' part tables took a minute each
// when they ran without the limit, and a sweep asked for 2 s ran for more than ten minutes).
// Each point's bound is the largest certified lower bound there (every bound of
// leverpl.Bounds holds the plans of the point's strategies).
func PipelineSweep(p *pl.Problem, source string, o leverpl.Options) (*PipelineSweepResult, error) {
	res := &PipelineSweepResult{Chain: source, MicroBatches: p.MicroBatches, Memory: p.Memory, Schedule: p.Schedule.String()}
	var names []string
	for _, st := range leverpl.Strategies {
		if !st.IsMILP() { // the sweep plots the planners; the MILPs certify in `memsched pipeline`
			names = append(names, st.Name)
		}
	}
	for P := 1; P <= p.GPUs; P++ {
		q := *p
		q.GPUs = P
		oo := o
		if !o.Deadline.IsZero() {
			left := time.Until(o.Deadline)
			oo.Deadline = time.Now().Add(left / time.Duration(p.GPUs-P+1))
		}
		outs, err := leverpl.RunAll(&q, names, oo)
		if err != nil {
			return nil, fmt.Errorf("report: pipeline sweep, %d GPUs: %w", P, err)
		}
		pt := PipelinePoint{GPUs: P}
		var exact *leverpl.Outcome
		for _, out := range outs {
			if out.Name == "exact" {
				exact = out
			}
			row := PipelineRow{Algo: out.Name, Feasible: out.Feasible, Optimal: out.Optimal, Seconds: out.Elapsed.Seconds(), Reason: out.Why()}
			if out.Feasible {
				row.Makespan, row.Parts = out.Makespan, len(out.Plan.Parts)
			}
			pt.Rows = append(pt.Rows, row)
		}
		bounds, _ := leverpl.Bounds(&q, o, exact) // the point keeps its best bound only
		for _, b := range bounds {
			if b.Value > pt.Bound && !math.IsInf(b.Value, 1) {
				pt.Bound, pt.BoundName, pt.CertifiedBy = b.Value, b.Name, b.CertifiedBy
			}
		}
		res.Points = append(res.Points, pt)
	}
	return res, nil
}
