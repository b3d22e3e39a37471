package weightlb

import (
	"context"
	"fmt"
	"math"
	"time"

	heur "github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/lever/weightoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// Certified is a lower bound on the best period of a weight-offloading problem together with
// what certifies each part of it (SPEC §5). Times are seconds.
type Certified struct {
	// Value is the best certified lower bound: the largest of SumU, Forced and the MILP's
	// believed bound. NaN when the problem has no schedule at all (Infeasible).
	Value float64
	// CertifiedBy names the part Value comes from.
	CertifiedBy string
	// SumU is Σ_i (u_{F_i} + u_{B_i}): a period with no idle time (certified by its definition).
	SumU float64
	// Forced is max_k E_k/β: at operation k at least E_k = Σ_{i≠layer(k)} |w_i| + M_k − M_GPU
	// bytes of other layers' weights are away from the GPU, and each must be prefetched again
	// before its own use in the period, on one prefetch channel of bandwidth β.
	Forced float64
	// Infeasible says that some operation does not fit in M_GPU even alone: no schedule exists.
	Infeasible bool
	// MILP is the guarded solve of the §6 model (nil when not run); MILPBound its believed
	// bound in seconds (NaN when none).
	MILP      *milp.Guarded
	MILPBound float64
	// Evidence is the verified schedule the MILP's answers were checked against.
	Evidence     milp.Evidence
	EvidenceName string
	// Selection is the offloading choice of the MILP's incumbent (nil without one).
	Selection heur.Selection
	Units     milp.Units
	// Note says why the MILP did not run or has no bound ("" when it ran): a model above
	// Options.MaxMemory, or a deadline passed while the model was built.
	Note string
}

// Options configure LowerBound.
type Options struct {
	// Solvers are tried in order by milp.SolveGuarded; empty skips the MILP (SumU and Forced
	// only).
	Solvers []milp.Solver
	Params  milp.Params
	// MaxMemory caps the estimated memory of the MILP (milp.ModelBytes of Nonzeros(L)); above
	// it the MILP is not built and Certified.Note says so. 0: no cap.
	MaxMemory int64
	// Known, when set, is the best schedule the caller has already validated (certify's
	// rows): LowerBound takes it as the evidence instead of running the strategies again.
	Known *Known
}

// Known is a validated schedule's strategy and period (seconds).
type Known struct {
	Name   string
	Period float64
}

// TrivialBounds returns Σu and the forced prefetch bound max_k E_k/β, and whether some
// operation cannot fit in M_GPU with every other layer's weights away.
func TrivialBounds(p *offload.Problem) (sumU, forced float64, infeasible bool) {
	var total int64
	for _, l := range p.Layers {
		sumU += l.UF + l.UB
		total += l.W
	}
	for i := 1; i <= p.L(); i++ {
		for _, b := range []bool{false, true} {
			op := p.OpMemory(i, b)
			if op > p.MGPU {
				infeasible = true
			}
			if e := total - p.Layer(i).W + op - p.MGPU; e > 0 {
				forced = math.Max(forced, float64(e)/p.Beta)
			}
		}
	}
	return sumU, forced, infeasible
}

// BestSchedule runs the weight-offloading strategies (lever/weightoffload, each validated by
// verify/periodic) and returns the shortest period with its name; ok is false when none finds
// a schedule. On a tie the first in report order names it.
func BestSchedule(p *offload.Problem) (name string, s *schedule.Periodic, rep periodic.Report, ok bool) {
	return BestScheduleUntil(p, nil)
}

// BestScheduleUntil is BestSchedule ended when stop closes: the best of the strategies that
// finished before.
func BestScheduleUntil(p *offload.Problem, stop <-chan struct{}) (name string, s *schedule.Periodic, rep periodic.Report, ok bool) {
	for _, st := range weightoffload.Strategies {
		out, err := st.RunUntil(p, stop)
		if err != nil || !out.Feasible {
			continue
		}
		if !ok || out.Report.Period < rep.Period {
			name, s, rep, ok = st.Name, out.Schedule, out.Report, true
		}
	}
	return name, s, rep, ok
}

// LowerBound computes the certified lower bound of p: Σu, the forced prefetch bound and, with
// solvers, the §6 MILP solved by milp.SolveGuarded against the best validated heuristic
// schedule — so that neither "infeasible" nor a bound above that schedule's period is ever
// believed. A solve stopped by a limit contributes its proven dual bound. An error means the
// model could not be built or no solver could run.
func LowerBound(ctx context.Context, p *offload.Problem, opt Options) (*Certified, error) {
	c := &Certified{MILPBound: math.NaN(), Evidence: milp.None(), Units: Units(p)}
	c.SumU, c.Forced, c.Infeasible = TrivialBounds(p)
	if c.Infeasible {
		c.Value, c.CertifiedBy = math.NaN(), "an operation exceeds M_GPU with every other weight away: no schedule exists"
		return c, nil
	}
	c.Value, c.CertifiedBy = c.SumU, "Σu (no idle time)"
	if c.Forced > c.Value {
		c.Value, c.CertifiedBy = c.Forced, "forced prefetch volume / β"
	}
	if k := opt.Known; k != nil {
		c.EvidenceName = k.Name
		c.Evidence = milp.Evidence{Value: k.Period / c.Units.Time,
			What: fmt.Sprintf("%s schedule with period %.10g s, validated by verify/periodic", k.Name, k.Period)}
	} else if name, _, rep, ok := BestScheduleUntil(p, ctx.Done()); ok {
		c.EvidenceName = name
		c.Evidence = milp.Evidence{Value: rep.Period / c.Units.Time,
			What: fmt.Sprintf("%s schedule with period %.10g s, validated by verify/periodic", name, rep.Period)}
	}
	if len(opt.Solvers) == 0 {
		return c, nil
	}
	nnz := Nonzeros(p.L())
	if need := milp.ModelBytes(nnz); opt.MaxMemory > 0 && need > opt.MaxMemory {
		c.Note = fmt.Sprintf("MILP not built: its %d nonzeros would take about %s, above the memory limit of %s (--max-memory); closed-form bounds only",
			nnz, instances.FormatSize(need), instances.FormatSize(opt.MaxMemory))
		return c, nil
	}
	built := time.Now()
	m, vars, err := BuildContext(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			c.MILP = &milp.Guarded{Result: &milp.Result{Status: milp.StoppedStatus(ctx), Bound: math.NaN(), Gap: math.Inf(1), Solver: opt.Solvers[0].Name()}}
			c.Note = "MILP not solved: the time ran out while its model was built"
			return c, nil
		}
		return nil, err
	}
	// Handing the model to a solver cannot be interrupted (HiGHS copies it in one C call: 6 s
	// for a 1000-block chain's 28 M nonzeros, which had been built in 15 s): with less time
	// left than half the build took, it would overrun the limit by that much.
	if dl, ok := ctx.Deadline(); ok {
		if left, took := time.Until(dl), time.Since(built); left < took/2 {
			c.MILP = &milp.Guarded{Result: &milp.Result{Status: milp.TimeLimit, Bound: math.NaN(), Gap: math.Inf(1), Solver: opt.Solvers[0].Name()}}
			c.Note = fmt.Sprintf("MILP not solved: %.1f s left once its model was built (in %.1f s), less than handing it to the solver takes", max(left.Seconds(), 0), took.Seconds())
			return c, nil
		}
	}
	g, err := milp.SolveGuarded(ctx, opt.Solvers, m, opt.Params, c.Evidence)
	if err != nil {
		return nil, err
	}
	c.MILP = g
	if g.Status == milp.Infeasible {
		// Believed only without evidence: no heuristic found a schedule either.
		c.Infeasible, c.Value, c.CertifiedBy = true, math.NaN(), fmt.Sprintf("MILP infeasible (%s)", g.Solver)
		return c, nil
	}
	if b := g.Bound; !math.IsNaN(b) && !math.IsInf(b, 0) {
		c.MILPBound = b * c.Units.Time
		if c.MILPBound > c.Value {
			c.Value = c.MILPBound
			what := "optimum"
			if g.Status != milp.Optimal {
				what = "proven dual bound at " + g.Status.String()
			}
			c.CertifiedBy = fmt.Sprintf("MILP (002 §6 corrected) %s, %s, relative gap %s", what, g.Solver, milp.GapText(g.Gap))
		}
	}
	if g.HasSolution {
		c.Selection = make(heur.Selection, p.L()+1)
		for i := 1; i <= p.L(); i++ {
			c.Selection[i][1] = g.Values[vars.D1[i]] > 0.5
			c.Selection[i][0] = g.Values[vars.D0[i]] > 0.5
		}
	}
	return c, nil
}

// Guided schedules the selection of the MILP's incumbent with 002 Alg. 2 (cut-point search,
// validated): the MILP-guided schedule. Where Greedy is far from the bound it tells whether the
// gap is the heuristic's selection or the bound's weakness.
func Guided(p *offload.Problem, c *Certified) (*schedule.Periodic, periodic.Report, error) {
	if c == nil || c.Selection == nil {
		return nil, periodic.Report{}, fmt.Errorf("weightlb: the MILP has no incumbent to schedule")
	}
	return heur.Schedule(p, c.Selection, true)
}
