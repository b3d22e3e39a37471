// Package weightlb builds the lower-bound MILP of 002 §6 for weight offloading, with the two
// corrections of SPEC §3, in sparse form.
//
// Operations are numbered j = 1..2L from B_L: operation L−i+1 is B_i, operation L+i is F_i,
// indices cyclic. For every layer i and operation j, continuous O_{i,j}, P_{i,j}, D_{i,j} ≥ 0 are
// the bytes of w_i uploaded, prefetched and deleted between the start of operation j and the
// start of the next one, and idle_j ≥ 0 the idle time after j. Binaries D_i^(1), D_i^(0), O_i*.
// State variables (one recurrence row each instead of O(L) cumulative sums per row):
//
//	m_{i,k}: bytes of w_i on the GPU at the start of k; m_{i,k+1} = m_{i,k} + P_{i,k} − D_{i,k}
//	         (cyclic), m_{i,B_i} = |w_i| and m_{i,F_i} = |w_i|  (eq. 5: full at B_i and F_i)
//	c_{i,k}: bytes of w_i uploaded since B_i, c_{i,B_i} = 0, c_{i,k+1} = c_{i,k} + O_{i,k}
//
// Rows:
//
//	(2) u_j + idle_j ≥ Σ_i O_{i,j}/β  and  u_j + idle_j ≥ Σ_i P_{i,j}/β
//	(3) idle_{B_i} ≥ O_{i,B_i}/β            (no upload of w_i during B_i)
//	(4) Σ_{i ≠ layer(k)} m_{i,k} ≤ M_GPU − M_k   (corrected: the own layer is in M_k)
//	(6) m_{i,k} ≤ |w_i|  and  m_{i,k} − |w_i| + c_{i,k} ≥ 0   (corrected: never more back than
//	    deleted; delete only what is on the CPU)
//	(7) Σ_j O_{i,j} = |w_i|·O_i*
//	(8) Σ_{j from F_i to B_i} D_{i,j} = |w_i|·D_i^(1),  Σ_{j from B_i to F_i} D_{i,j} = |w_i|·D_i^(0)
//
// minimizing Σ_j (u_j + idle_j). Every valid schedule gives a feasible point, so the optimum
// (and any proven dual bound) is a lower bound on the best period.
//
// Units: the model is written in units chosen from the data (milp.ChooseUnits over the weight
// and activation sizes and the operation times), so that its coefficients, bounds and
// right-hand sides stay near 1 whether the instance counts bytes or GiB — sizes of 10⁻⁶ in a
// fixed unit sit at the solvers' feasibility tolerance and have made HiGHS report a feasible
// model infeasible and a bound above the optimum (docs/weight-offload.md). The objective times
// Vars.Units.Time is the period in seconds; the model's Comments carry the units line.
package weightlb

import (
	"context"
	"fmt"
	"math"

	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// Vars gives access to the model's variables (for tests, reports and the MILP-guided schedule).
type Vars struct {
	Idle []model.Var // by operation 1..2L (index 0 unused)
	// D1 and D0 are the binaries of the choices (i,1) and (i,0), by layer 1..L (index 0 unused).
	D1, D0 []model.Var
	// Units are the model's memory and time units.
	Units milp.Units
}

// Units returns the units Build writes p's model in.
func Units(p *offload.Problem) milp.Units {
	sizes := []int64{p.A0, p.MGPU}
	var times []float64
	for _, l := range p.Layers {
		sizes = append(sizes, l.W, l.A)
		times = append(times, l.UF, l.UB)
	}
	return milp.ChooseUnits(sizes, times)
}

// opIndex returns the 1-based operation index of F_i or B_i.
func opIndex(L, i int, backward bool) int {
	if backward {
		return L - i + 1
	}
	return L + i
}

// layerOf returns the layer and direction of operation j.
func layerOf(L, j int) (int, bool) {
	if j <= L {
		return L - j + 1, true
	}
	return j - L, false
}

// Nonzeros is the number of constraint nonzeros of Build's model for L layers: 28L² + 7L
// (14 per layer and operation: rows (2), the m and c recurrences, (6), (7), (8) and the memory
// rows; TestNonzeros checks it against Build). It sizes the model before it is built
// (milp.ModelBytes): 2.6 million at L = 302, 28 million at L = 1002.
func Nonzeros(L int) int { return 28*L*L + 7*L }

// Build returns the MILP for p in the units of Units(p).
func Build(p *offload.Problem) (*model.Model, *Vars, error) {
	return BuildContext(context.Background(), p)
}

// BuildContext is Build under ctx: it returns ctx's error as soon as ctx is done (building a
// model of millions of nonzeros takes seconds, and a deadline must hold during it too).
func BuildContext(ctx context.Context, p *offload.Problem) (*model.Model, *Vars, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	L := p.L()
	n := 2 * L
	un := Units(p)
	m := model.New(fmt.Sprintf("weight-offload-lb L=%d", L))
	m.Comments = append(m.Comments, un.Comment())
	beta := p.Beta * un.Time / un.Memory // memory units per time unit
	w := func(i int) float64 { return un.Mem(p.Layer(i).W) }
	u := func(j int) float64 {
		i, b := layerOf(L, j)
		if b {
			return un.Secs(p.Layer(i).UB)
		}
		return un.Secs(p.Layer(i).UF)
	}
	O := make([][]model.Var, L+1)
	P := make([][]model.Var, L+1)
	D := make([][]model.Var, L+1)
	M := make([][]model.Var, L+1)
	Cv := make([][]model.Var, L+1)
	vars := &Vars{Idle: make([]model.Var, n+1), D1: make([]model.Var, L+1), D0: make([]model.Var, L+1), Units: un}
	for j := 1; j <= n; j++ {
		vars.Idle[j] = m.AddContinuous(fmt.Sprintf("idle_%d", j), 0, math.Inf(1))
	}
	for i := 1; i <= L; i++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		O[i], P[i], D[i] = make([]model.Var, n+1), make([]model.Var, n+1), make([]model.Var, n+1)
		M[i], Cv[i] = make([]model.Var, n+1), make([]model.Var, n+1)
		for j := 1; j <= n; j++ {
			O[i][j] = m.AddContinuous(fmt.Sprintf("O_%d_%d", i, j), 0, w(i))
			P[i][j] = m.AddContinuous(fmt.Sprintf("P_%d_%d", i, j), 0, w(i))
			D[i][j] = m.AddContinuous(fmt.Sprintf("D_%d_%d", i, j), 0, w(i))
			M[i][j] = m.AddContinuous(fmt.Sprintf("m_%d_%d", i, j), 0, w(i))
			Cv[i][j] = m.AddContinuous(fmt.Sprintf("c_%d_%d", i, j), 0, w(i))
		}
	}
	var e model.Expr
	row := func() *model.Expr { e.Reset(); return &e }
	// (2) and (3).
	for j := 1; j <= n; j++ {
		ro, rp := row(), model.Expr{}
		for i := 1; i <= L; i++ {
			ro.Add(O[i][j], 1/beta)
			rp.Add(P[i][j], 1/beta)
		}
		ro.Add(vars.Idle[j], -1)
		m.AddLE(fmt.Sprintf("offload_time_%d", j), *ro, u(j))
		rp.Add(vars.Idle[j], -1)
		m.AddLE(fmt.Sprintf("prefetch_time_%d", j), rp, u(j))
	}
	for i := 1; i <= L; i++ {
		b := opIndex(L, i, true)
		m.AddLE(fmt.Sprintf("no_upload_during_B_%d", i), *row().Add(O[i][b], 1/beta).Add(vars.Idle[b], -1), 0)
	}
	next := func(j int) int { return j%n + 1 }
	for i := 1; i <= L; i++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		b, f := opIndex(L, i, true), opIndex(L, i, false)
		// State recurrences (cyclic for m; from B_i for c).
		for j := 1; j <= n; j++ {
			m.AddEq(fmt.Sprintf("m_rec_%d_%d", i, j), *row().Add(M[i][next(j)], 1).Add(M[i][j], -1).Add(P[i][j], -1).Add(D[i][j], 1), 0)
		}
		m.AddEq(fmt.Sprintf("full_at_B_%d", i), *row().Add(M[i][b], 1), w(i))
		m.AddEq(fmt.Sprintf("full_at_F_%d", i), *row().Add(M[i][f], 1), w(i))
		m.AddEq(fmt.Sprintf("c_start_%d", i), *row().Add(Cv[i][b], 1), 0)
		for k, j := b, 0; j < n-1; j++ {
			m.AddEq(fmt.Sprintf("c_rec_%d_%d", i, k), *row().Add(Cv[i][next(k)], 1).Add(Cv[i][k], -1).Add(O[i][k], -1), 0)
			k = next(k)
		}
		// (6) second part: m − |w| + c ≥ 0 (the first part is m's upper bound).
		for k := 1; k <= n; k++ {
			m.AddGE(fmt.Sprintf("deleted_on_cpu_%d_%d", i, k), *row().Add(M[i][k], 1).Add(Cv[i][k], 1), w(i))
		}
		// (7), (8).
		oStar := m.AddBinary(fmt.Sprintf("Ostar_%d", i))
		d1 := m.AddBinary(fmt.Sprintf("D1_%d", i))
		d0 := m.AddBinary(fmt.Sprintf("D0_%d", i))
		vars.D1[i], vars.D0[i] = d1, d0
		r := row()
		for j := 1; j <= n; j++ {
			r.Add(O[i][j], 1)
		}
		r.Add(oStar, -w(i))
		m.AddEq(fmt.Sprintf("one_offload_%d", i), *r, 0)
		r = row()
		for k := f; k != b; k = next(k) {
			r.Add(D[i][k], 1)
		}
		r.Add(d1, -w(i))
		m.AddEq(fmt.Sprintf("delete_F_to_B_%d", i), *r, 0)
		r = row()
		for k := b; k != f; k = next(k) {
			r.Add(D[i][k], 1)
		}
		r.Add(d0, -w(i))
		m.AddEq(fmt.Sprintf("delete_B_to_F_%d", i), *r, 0)
	}
	// (4) corrected memory rows.
	for k := 1; k <= n; k++ {
		if k%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		i0, back := layerOf(L, k)
		r := row()
		for i := 1; i <= L; i++ {
			if i != i0 {
				r.Add(M[i][k], 1)
			}
		}
		rhs := un.Mem(p.MGPU - p.OpMemory(i0, back))
		if len(r.Terms) == 0 {
			r.Add(vars.Idle[k], 0)
		}
		m.AddLE(fmt.Sprintf("memory_%d", k), *r, rhs)
	}
	obj := model.Expr{}
	for j := 1; j <= n; j++ {
		obj.Add(vars.Idle[j], 1)
		obj.Constant += u(j)
	}
	m.SetObjective(model.Minimize, obj)
	return m, vars, m.Err()
}
