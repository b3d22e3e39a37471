package checkmate

import (
	"fmt"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/schedule"
)

// Formulation is a built model with handles to its variables.
type Formulation struct {
	Model  *model.Model
	Units  milp.Units
	Graph  *instances.Graph
	Budget int64
	// R[t][i] for i ≤ t and S[t][i] for i < t.
	R, S [][]model.Var
}

// Build writes the MILP of the package doc for g under budget bytes. It returns an error when g
// does not validate or the budget is negative.
func Build(g *instances.Graph, budget int64) (*Formulation, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if budget < 0 {
		return nil, fmt.Errorf("checkmate: budget %d bytes is negative", budget)
	}
	n := g.Len()
	var sizes []int64
	var times []float64
	for _, nd := range g.Nodes {
		sizes = append(sizes, nd.Size, nd.Temp)
		times = append(times, nd.Cost)
	}
	u := milp.ChooseUnits(sizes, times)
	m := model.New("checkmate")
	if g.Name != "" {
		m.Name = "checkmate-" + g.Name
	}
	m.Comments = append(m.Comments, u.Comment(), fmt.Sprintf("checkmate remat MILP: %d nodes, budget %d bytes", n, budget))
	f := &Formulation{Model: m, Units: u, Graph: g, Budget: budget, R: make([][]model.Var, n), S: make([][]model.Var, n)}
	users := g.Users()
	M := u.Mem(budget)
	obj := model.Expr{}
	for t := 0; t < n; t++ {
		f.R[t] = make([]model.Var, t+1)
		f.S[t] = make([]model.Var, t)
		for i := 0; i <= t; i++ {
			lb := 0.0
			if i == t {
				lb = 1
			}
			f.R[t][i] = m.AddVar(fmt.Sprintf("R_%d_%d", t, i), model.Binary, lb, 1)
			obj.Add(f.R[t][i], u.Secs(g.Nodes[i].Cost))
		}
		for i := 0; i < t; i++ {
			f.S[t][i] = m.AddBinary(fmt.Sprintf("S_%d_%d", t, i))
		}
	}
	m.SetObjective(model.Minimize, obj)
	for t := 0; t < n; t++ {
		R, S := f.R[t], f.S[t]
		for k := 0; k <= t; k++ {
			for _, i := range g.Nodes[k].Deps {
				m.AddLE(fmt.Sprintf("dep_%d_%d_%d", t, i, k), *new(model.Expr).Add(R[k], 1).Add(R[i], -1).Add(S[i], -1), 0)
			}
		}
		for i := 0; i < t; i++ {
			m.AddLE(fmt.Sprintf("once_%d_%d", t, i), *new(model.Expr).Add(R[i], 1).Add(S[i], 1), 1)
		}
		if t+1 < n {
			for i := 0; i <= t; i++ {
				e := new(model.Expr).Add(f.S[t+1][i], 1).Add(R[i], -1)
				if i < t {
					e.Add(S[i], -1)
				}
				m.AddLE(fmt.Sprintf("keep_%d_%d", t+1, i), *e, 0)
			}
		}
		// Memory recurrence.
		var prev model.Var
		var prevFree model.Expr
		for k := 0; k <= t; k++ {
			nd := g.Nodes[k]
			U := m.AddContinuous(fmt.Sprintf("U_%d_%d", t, k), 0, M)
			e := new(model.Expr).Add(U, 1).Add(R[k], -u.Mem(nd.Size))
			rhs := 0.0
			if k == 0 {
				for i := 0; i < t; i++ {
					e.Add(S[i], -u.Mem(g.Nodes[i].Size))
				}
				rhs = u.Mem(g.Fixed)
			} else {
				e.Add(prev, -1)
				for _, tm := range prevFree.Terms {
					e.Add(tm.Var, tm.Coef)
				}
			}
			m.AddEq(fmt.Sprintf("mem_%d_%d", t, k), *e, rhs)
			if nd.Temp > 0 {
				m.AddLE(fmt.Sprintf("peak_%d_%d", t, k), *new(model.Expr).Add(U, 1).Add(R[k], u.Mem(nd.Temp)), M)
			}
			// Frees after k: its inputs and its own output (none after the stage's last node:
			// nothing follows that they could make room for).
			prevFree = model.Expr{}
			if k == t {
				break
			}
			for _, i := range append(append([]int(nil), nd.Deps...), k) {
				fr := m.AddBinary(fmt.Sprintf("FREE_%d_%d_%d", t, i, k))
				prevFree.Add(fr, u.Mem(g.Nodes[i].Size))
				m.AddLE(fmt.Sprintf("frc_%d_%d_%d", t, i, k), *new(model.Expr).Add(fr, 1).Add(R[k], -1), 0)
				if t+1 < n {
					m.AddLE(fmt.Sprintf("frk_%d_%d_%d", t, i, k), *new(model.Expr).Add(fr, 1).Add(f.S[t+1][i], 1), 1)
				}
				for _, j := range users[i] {
					if j > k && j <= t {
						m.AddLE(fmt.Sprintf("fru_%d_%d_%d_%d", t, i, k, j), *new(model.Expr).Add(fr, 1).Add(R[j], 1), 1)
					}
				}
			}
			prev = U
		}
	}
	if err := m.Err(); err != nil {
		return nil, fmt.Errorf("checkmate: %w", err)
	}
	return f, nil
}

// Schedule reads the staged schedule from a point of the model (R, S rounded at 1/2).
func (f *Formulation) Schedule(x []float64) *schedule.GraphSchedule {
	s := &schedule.GraphSchedule{}
	for t := range f.R {
		st := schedule.GraphStage{Keep: []int{}, Compute: []int{}}
		for i, v := range f.S[t] {
			if x[v] > 0.5 {
				st.Keep = append(st.Keep, i)
			}
		}
		for i, v := range f.R[t] {
			if x[v] > 0.5 {
				st.Compute = append(st.Compute, i)
			}
		}
		s.Stages = append(s.Stages, st)
	}
	return s
}
