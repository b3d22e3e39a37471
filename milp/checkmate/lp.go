package checkmate

import (
	"context"
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/graphsim"
)

// Approx is the fast mode: the LP relaxation's certified bound and Checkmate's two-phase
// rounding (Jain et al. 2020 §5).
type Approx struct {
	// LPStatus is the relaxation's solve status.
	LPStatus milp.Status
	// Bound is milp.LPBound's rigorous lower bound (Neumaier–Shcherbina on the LP's duals), in
	// seconds; −Inf when the LP was not solved or gave no duals, +Inf when it is infeasible.
	Bound float64
	// LPValue is the LP optimum the solver reported, in seconds (not rigorous; NaN if none).
	LPValue float64
	// Schedule is the rounded schedule when it fits the budget (replayed by graphsim), with its
	// Cost and Peak; nil when the rounding exceeds the budget (Checkmate's rounding does not
	// guarantee memory feasibility), RoundedPeak then says by how much.
	Schedule    *schedule.GraphSchedule
	Cost        float64
	Peak        int64
	RoundedPeak int64
}

// SolveLP solves the LP relaxation of the MILP for g under budget, returns its certified bound,
// and rounds it in two phases: S[t,i] = 1 where the LP's S ≥ 1/2, then the cheapest R that makes
// (R, S) satisfy dependencies, persistence and the frontier (Round).
func SolveLP(ctx context.Context, s milp.Solver, g *instances.Graph, budget int64, p milp.Params) (*Approx, *Formulation, error) {
	f, err := Build(g, budget)
	if err != nil {
		return nil, nil, err
	}
	lp := milp.Relax(f.Model)
	res, err := milp.Solve(ctx, s, lp, p)
	if err != nil {
		return nil, f, err
	}
	a := &Approx{LPStatus: res.Status, Bound: math.Inf(-1), LPValue: math.NaN(), Cost: math.Inf(1)}
	switch res.Status {
	case milp.Infeasible:
		a.Bound = math.Inf(1)
		return a, f, nil
	case milp.Optimal:
	default:
		return a, f, nil
	}
	a.LPValue = res.Objective * f.Units.Time
	if len(res.RowDuals) == lp.NumRows() {
		a.Bound = milp.SafeLPBound(lp, res.RowDuals) * f.Units.Time
	}
	keep := make([][]bool, g.Len())
	for t := range keep {
		keep[t] = make([]bool, t)
		for i, v := range f.S[t] {
			keep[t][i] = res.Values[v] >= 0.5
		}
	}
	sched := Round(g, keep)
	rep, err := graphsim.Replay(g, sched, math.MaxInt64)
	if err != nil {
		panic("checkmate: rounded schedule breaks a rule other than memory: " + err.Error())
	}
	a.RoundedPeak = rep.Peak
	if rep.Peak <= budget {
		a.Schedule, a.Cost, a.Peak = sched, rep.Cost, rep.Peak
	}
	return a, f, nil
}

// Round is phase 2 of Checkmate's rounding: given keep[t][i] (S, i < t), it computes in each
// stage t the fewest nodes that make the schedule valid apart from memory: node t (the
// frontier), every i kept into t+1 but not into t (persistence), and, recursively, every input of
// a computed node that stage t neither keeps nor computes (dependencies).
func Round(g *instances.Graph, keep [][]bool) *schedule.GraphSchedule {
	n := g.Len()
	s := &schedule.GraphSchedule{}
	for t := 0; t < n; t++ {
		kept := func(i int) bool { return i < t && keep[t][i] }
		need := make([]bool, t+1)
		need[t] = true
		if t+1 < n {
			for i := 0; i <= t; i++ {
				if keep[t+1][i] && !kept(i) {
					need[i] = true
				}
			}
		}
		// Inputs come earlier in the order: one sweep from t down closes the set.
		for k := t; k >= 0; k-- {
			if !need[k] {
				continue
			}
			for _, d := range g.Nodes[k].Deps {
				if !kept(d) {
					need[d] = true
				}
			}
		}
		st := schedule.GraphStage{Keep: []int{}, Compute: []int{}}
		for i := 0; i < t; i++ {
			if kept(i) {
				st.Keep = append(st.Keep, i)
			}
		}
		for i, x := range need {
			if x {
				st.Compute = append(st.Compute, i)
			}
		}
		s.Stages = append(s.Stages, st)
	}
	return s
}
