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

// PipelineSweep runs every pipeline strategy on p with P' = 1..p.GPUs GPUs. The exact search
// of each point gets an equal share of the time left to o.Deadline (none: no limit); the
// baselines always run. Each point's bound is the largest certified lower bound there (every
// bound of leverpl.Bounds holds the plans of the point's strategies).
func PipelineSweep(p *pl.Problem, source string, o leverpl.Options) (*PipelineSweepResult, error) {
	res := &PipelineSweepResult{Chain: source, MicroBatches: p.MicroBatches, Memory: p.Memory, Schedule: p.Schedule.String()}
	for P := 1; P <= p.GPUs; P++ {
		q := *p
		q.GPUs = P
		oo := o
		if !o.Deadline.IsZero() {
			left := time.Until(o.Deadline)
			oo.Deadline = time.Now().Add(left / time.Duration(p.GPUs-P+1))
		}
		pt := PipelinePoint{GPUs: P}
		var exact *leverpl.Outcome
		for _, st := range leverpl.Strategies {
			if st.IsMILP() {
				continue // the sweep plots the planners; the MILPs certify in `memsched pipeline`
			}
			so := oo
			if st.Name != "exact" {
				so.Deadline = time.Time{}
			}
			out, err := st.Run(&q, so)
			if err != nil {
				return nil, fmt.Errorf("report: pipeline sweep, %d GPUs: %w", P, err)
			}
			if st.Name == "exact" {
				exact = out
			}
			row := PipelineRow{Algo: st.Name, Feasible: out.Feasible, Optimal: out.Optimal, Seconds: out.Elapsed.Seconds(), Reason: out.Reason}
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
