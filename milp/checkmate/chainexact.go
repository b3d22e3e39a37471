package checkmate

import (
	"fmt"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// ChainFormulation is the chain-exact model (BuildChain) with handles to its variables. Slices
// are indexed by phase ℓ = 1..n (n = c.Len(), the loss stage included) and then by stage index;
// an absent variable is -1.
type ChainFormulation struct {
	Model  *model.Model
	Units  milp.Units
	Chain  *instances.Chain
	Budget int64
	// Fck[ℓ][k], Fn[ℓ][k], Fall[ℓ][k], k = 1..ℓ: F_ck^k, F_∅^k, F_all^k runs in phase ℓ.
	Fck, Fn, Fall [][]model.Var
	// P[ℓ][j] (plain a^j) and Q[ℓ][j] (ā^j), j = 1..ℓ, stored when phase ℓ starts (a^0 always is).
	P, Q [][]model.Var
	// U[ℓ][k], k = 1..ℓ: the memory stored right before F^k's slot in phase ℓ (δ^ℓ included).
	U [][]model.Var
}

const noVar = model.Var(-1)

// BuildChain writes the chain-exact MILP of c under budget bytes (everything counted, a^0
// included): Checkmate's staged model (SPEC §4) on 004's operations (SPEC §1), exact on chains.
//
// Stages are 004's phases (Def. 4.2): phase ℓ = n, n−1, …, 1 (n = L+1) holds δ^ℓ and ends with
// B^ℓ, which is its frontier. Inside a phase the forwards run in index order, each at most once,
// as Checkmate's nodes do inside a stage. Binary variables, for 1 ≤ k ≤ ℓ:
//
//	Fck[ℓ,k], Fn[ℓ,k], Fall[ℓ,k]   F_ck^k, F_∅^k, F_all^k runs in phase ℓ (two producers of a^k,
//	                               one of ā^k; Fck/Fn only for k < ℓ, Fn only for k ≥ 2)
//	P[ℓ,k], Q[ℓ,k]                 a^k, resp. ā^k, is stored when phase ℓ starts (Checkmate's S)
//
// and continuous U[ℓ,k] ∈ [0, M], the memory held right before F^k's slot. With X = Fck+Fn+Fall:
//
//	once      X[ℓ,k] + P[ℓ,k] + Q[ℓ,k] ≤ 1                 (nothing stored is recomputed)
//	either    X[ℓ,k] ≤ P[ℓ,k−1] + Q[ℓ,k−1] + X[ℓ,k−1]      (input a^{k−1} or ā^{k−1}, k ≥ 2)
//	plain     Fn[ℓ,k] ≤ P[ℓ,k−1] + Fck[ℓ,k−1] + Fn[ℓ,k−1]   (F_∅ consumes a plain a^{k−1})
//	backward  Q[ℓ,ℓ] + Fall[ℓ,ℓ] = 1,  a^{ℓ−1} or ā^{ℓ−1} still stored at B^ℓ
//	carry     P[ℓ−1,j] = P[ℓ,j] + Fck[ℓ,j] + Fn[ℓ,j] − Fn[ℓ,j+1]  (j ≤ ℓ−2; B^ℓ removes a plain a^{ℓ−1})
//	          Q[ℓ−1,j] = Q[ℓ,j] + Fall[ℓ,j]                        (j ≤ ℓ−1; B^ℓ removes ā^ℓ only)
//	memory    U[ℓ,1] = ω_δ^ℓ + ω_a^0 + Σ_j (ω_a^j P[ℓ,j] + ω_ā^j Q[ℓ,j])
//	          U[ℓ,k+1] = U[ℓ,k] + ω_a^k (Fck+Fn)[ℓ,k] + ω_ā^k Fall[ℓ,k] − ω_a^{k−1} Fn[ℓ,k]
//	          U[ℓ,k] + (ω_a^k + o_f^k)(Fck+Fn)[ℓ,k] + (ω_ā^k + o_f^k) Fall[ℓ,k] ≤ M
//	          U[ℓ,ℓ] + ω_ā^ℓ Fall[ℓ,ℓ] + ω_δ^{ℓ−1} + o_b^ℓ ≤ M
//	minimise  Σ u_f^k X[ℓ,k] + Σ_ℓ u_b^ℓ · backwards     (backwards ∈ [1, 1]: the B^ℓ run once each)
//
// Values are removed only as 004 removes them: F_∅^k consumes a^{k−1}, B^ℓ consumes δ^ℓ, ā^ℓ
// and a plain a^{ℓ−1} (the carry rows); there is no free. Phase n starts from {a^0, δ^n}.
//
// Every point is a valid sequence of 004's model with the memory the simulator computes, so the
// optimum is ≥ the exhaustive oracle's. It is equal to it: by 004 Lemma 4.4 some optimal
// sequence is weakly persistent, and C_FL's (Thm 4.7, re-derived in docs/dp.md, equal to the
// oracle on every tested instance) are, phase by phase, one walk F^{r+1} … F^ℓ in index order
// from the floating checkpoint, each forward once, no F_all over a stored a^k — points of this
// model. The model leaves out F_all over a stored plain a^k and a forward run twice in a phase,
// which such optima never need. Size: about 3n²/2 forward, n² state and n²/2 memory columns,
// O(n²) rows with at most n+2 nonzeros.
func BuildChain(c *instances.Chain, budget int64) (*ChainFormulation, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if budget < 0 {
		return nil, fmt.Errorf("checkmate: budget %d bytes is negative", budget)
	}
	n := c.Len()
	u := ChainUnits(c)
	m := model.New("checkmate-chain")
	if c.Name != "" {
		m.Name = "checkmate-chain-" + c.Name
	}
	m.Comments = append(m.Comments, u.Comment(), fmt.Sprintf("checkmate chain-exact remat MILP (004 model): %d stages, budget %d bytes", n, budget))
	f := &ChainFormulation{Model: m, Units: u, Chain: c, Budget: budget}
	mk := func() [][]model.Var {
		s := make([][]model.Var, n+1)
		for l := 1; l <= n; l++ {
			s[l] = make([]model.Var, l+1)
			for k := range s[l] {
				s[l][k] = noVar
			}
		}
		return s
	}
	f.Fck, f.Fn, f.Fall, f.P, f.Q, f.U = mk(), mk(), mk(), mk(), mk(), mk()
	M := u.Mem(budget)
	a := func(j int) float64 { return u.Mem(c.SizeA(j)) }
	abar := func(j int) float64 { return u.Mem(c.Stage(j).ABar) }
	// Σ u_b is the cost of a column fixed to 1 rather than an objective constant: LP files
	// with a constant are read differently by cbc (which drops it) and glpsol (which refuses).
	var ub float64
	for _, st := range c.Stages {
		ub += st.UB
	}
	obj := model.Expr{}
	obj.Add(m.AddContinuous("backwards", 1, 1), u.Secs(ub))
	for l := n; l >= 1; l-- {
		for k := 1; k <= l; k++ {
			uf := u.Secs(c.Stage(k).UF)
			if k < l {
				f.Fck[l][k] = m.AddBinary(fmt.Sprintf("Fck_%d_%d", l, k))
				obj.Add(f.Fck[l][k], uf)
				if k >= 2 { // F_∅^1 would consume a^0, which B^1 needs and nothing recomputes
					f.Fn[l][k] = m.AddBinary(fmt.Sprintf("Fn_%d_%d", l, k))
					obj.Add(f.Fn[l][k], uf)
				}
			}
			f.Fall[l][k] = m.AddBinary(fmt.Sprintf("Fall_%d_%d", l, k))
			obj.Add(f.Fall[l][k], uf)
			if l < n {
				if k < l {
					f.P[l][k] = m.AddBinary(fmt.Sprintf("P_%d_%d", l, k))
				}
				f.Q[l][k] = m.AddBinary(fmt.Sprintf("Q_%d_%d", l, k))
			}
			f.U[l][k] = m.AddContinuous(fmt.Sprintf("U_%d_%d", l, k), 0, M)
		}
	}
	m.SetObjective(model.Minimize, obj)
	// add appends coef·v to e when v exists.
	add := func(e *model.Expr, v model.Var, coef float64) *model.Expr {
		if v != noVar {
			e.Add(v, coef)
		}
		return e
	}
	for l := n; l >= 1; l-- {
		Fck, Fn, Fall, P, Q, U := f.Fck[l], f.Fn[l], f.Fall[l], f.P[l], f.Q[l], f.U[l]
		x := func(e *model.Expr, k int, coef float64) *model.Expr {
			return add(add(add(e, Fck[k], coef), Fn[k], coef), Fall[k], coef)
		}
		start := new(model.Expr).Add(U[1], 1)
		for j := 1; j <= l; j++ {
			add(add(start, P[j], -a(j)), Q[j], -abar(j))
		}
		m.AddEq(fmt.Sprintf("mem0_%d", l), *start, u.Mem(c.SizeDelta(l)+c.A0))
		for k := 1; k <= l; k++ {
			st := c.Stage(k)
			m.AddLE(fmt.Sprintf("once_%d_%d", l, k), *add(add(x(new(model.Expr), k, 1), P[k], 1), Q[k], 1), 1)
			if k >= 2 {
				e := x(new(model.Expr), k, 1)
				add(add(x(e, k-1, -1), P[k-1], -1), Q[k-1], -1)
				m.AddLE(fmt.Sprintf("either_%d_%d", l, k), *e, 0)
				if Fn[k] != noVar {
					e := new(model.Expr).Add(Fn[k], 1)
					add(add(add(e, P[k-1], -1), Fck[k-1], -1), Fn[k-1], -1)
					m.AddLE(fmt.Sprintf("plain_%d_%d", l, k), *e, 0)
				}
			}
			of := u.Mem(st.OF)
			peak := new(model.Expr).Add(U[k], 1)
			add(add(add(peak, Fck[k], a(k)+of), Fn[k], a(k)+of), Fall[k], abar(k)+of)
			m.AddLE(fmt.Sprintf("memf_%d_%d", l, k), *peak, M)
			if k < l {
				e := new(model.Expr).Add(U[k+1], 1).Add(U[k], -1)
				add(add(add(e, Fck[k], -a(k)), Fn[k], -a(k)+a(k-1)), Fall[k], -abar(k))
				m.AddEq(fmt.Sprintf("mem_%d_%d", l, k+1), *e, 0)
			}
		}
		// B^ℓ: ā^ℓ stored or computed; a^{ℓ−1} or ā^{ℓ−1} still there; its memory.
		m.AddEq(fmt.Sprintf("abar_%d", l), *add(new(model.Expr).Add(Fall[l], 1), Q[l], 1), 1)
		if l >= 2 {
			e := add(add(x(new(model.Expr), l-1, 1), P[l-1], 1), Q[l-1], 1)
			m.AddGE(fmt.Sprintf("input_%d", l), *e, 1)
		}
		memb := new(model.Expr).Add(U[l], 1).Add(Fall[l], abar(l))
		m.AddLE(fmt.Sprintf("memb_%d", l), *memb, M-u.Mem(c.SizeDelta(l-1)+c.Stage(l).OB))
		// Carry the state into phase ℓ−1.
		if l >= 2 {
			for j := 1; j <= l-1; j++ {
				if j <= l-2 {
					e := new(model.Expr).Add(f.P[l-1][j], 1)
					add(add(add(add(e, P[j], -1), Fck[j], -1), Fn[j], -1), Fn[j+1], 1)
					m.AddEq(fmt.Sprintf("carryP_%d_%d", l-1, j), *e, 0)
				}
				e := new(model.Expr).Add(f.Q[l-1][j], 1)
				add(add(e, Q[j], -1), Fall[j], -1)
				m.AddEq(fmt.Sprintf("carryQ_%d_%d", l-1, j), *e, 0)
			}
		}
	}
	if err := m.Err(); err != nil {
		return nil, fmt.Errorf("checkmate: %w", err)
	}
	return f, nil
}

// Sequence reads the sequence of a point of the model (binaries rounded at 1/2): phase by
// phase from n down to 1, the forwards in index order, then B^ℓ.
func (f *ChainFormulation) Sequence(x []float64) schedule.Sequence {
	var seq schedule.Sequence
	on := func(v model.Var) bool { return v != noVar && x[v] > 0.5 }
	for l := f.Chain.Len(); l >= 1; l-- {
		for k := 1; k <= l; k++ {
			switch {
			case on(f.Fck[l][k]):
				seq = append(seq, schedule.Op{Kind: schedule.Fck, Stage: k})
			case on(f.Fn[l][k]):
				seq = append(seq, schedule.Op{Kind: schedule.Fn, Stage: k})
			case on(f.Fall[l][k]):
				seq = append(seq, schedule.Op{Kind: schedule.Fall, Stage: k})
			}
		}
		seq = append(seq, schedule.Op{Kind: schedule.B, Stage: l})
	}
	return seq
}

// Point converts a sequence of 004's model into a point of the model (model units), e.g. to
// warm-start a solve from a dynamic program's sequence. It returns an error when seq is not
// valid, exceeds the budget, or lies outside the model: a forward that is not after the
// phase's previous one in index order (or repeats it), F_all over a stored plain a^k, a Del, or
// an F_ck/F_∅ the model has no variable for. The point satisfies every row (checked) and its
// objective is seq's makespan.
func (f *ChainFormulation) Point(seq schedule.Sequence) ([]float64, error) {
	c := f.Chain
	n := c.Len()
	if _, err := f.replay(seq); err != nil {
		return nil, err
	}
	x := make([]float64, f.Model.NumVars())
	x[0] = 1 // backwards
	set := func(v model.Var, what string, l, k int) error {
		if v == noVar {
			return fmt.Errorf("checkmate: %s^%d in phase %d has no variable in the chain-exact model", what, k, l)
		}
		x[v] = 1
		return nil
	}
	st := verify.InitialState(c)
	i := 0
	for l := n; l >= 1; l-- {
		for j := 1; j <= n; j++ {
			switch a := st.Acts[j]; {
			case a == verify.None:
			case j > l:
				return nil, fmt.Errorf("checkmate: stage %d stored in phase %d", j, l)
			case a == verify.Plain:
				if err := set(f.P[l][j], "P", l, j); err != nil {
					return nil, err
				}
			default:
				if err := set(f.Q[l][j], "Q", l, j); err != nil {
					return nil, err
				}
			}
		}
		last := 0
		for k := 1; k <= l; k++ {
			x[f.U[l][k]] = f.Units.Mem(st.Memory(c))
			if i >= len(seq) || seq[i].Kind == schedule.B || seq[i].Stage != k {
				if i < len(seq) && seq[i].Kind != schedule.B && seq[i].Stage <= last {
					return nil, fmt.Errorf("checkmate: operation %d (%v) is not in index order within phase %d", i, seq[i], l)
				}
				continue
			}
			op := seq[i]
			var err error
			switch op.Kind {
			case schedule.Fck:
				err = set(f.Fck[l][k], "F_ck", l, k)
			case schedule.Fn:
				err = set(f.Fn[l][k], "F_∅", l, k)
			case schedule.Fall:
				if st.Acts[k] == verify.Plain {
					err = fmt.Errorf("checkmate: operation %d (%v) replaces a stored a^%d, which the chain-exact model leaves out", i, op, k)
				} else {
					err = set(f.Fall[l][k], "F_all", l, k)
				}
			default:
				err = fmt.Errorf("checkmate: operation %d (%v) is outside the chain-exact model", i, op)
			}
			if err != nil {
				return nil, err
			}
			if _, _, err := st.Apply(c, op); err != nil {
				panic("checkmate: a replayed sequence failed: " + err.Error())
			}
			last = k
			i++
		}
		if i >= len(seq) || seq[i] != (schedule.Op{Kind: schedule.B, Stage: l}) {
			return nil, fmt.Errorf("checkmate: phase %d does not end with B^%d in index order (operation %d)", l, l, i)
		}
		if _, _, err := st.Apply(c, seq[i]); err != nil {
			panic("checkmate: a replayed sequence failed: " + err.Error())
		}
		i++
	}
	if err := f.Model.Check(x).Err(milp.FeasTol); err != nil {
		return nil, fmt.Errorf("checkmate: the point of a valid sequence breaks the model: %w", err)
	}
	return x, nil
}

// ChainUnits returns the units BuildChain writes c's model in (milp.ChooseUnits over its sizes
// and operation times), so that a caller can read the model's values back in seconds without
// building it.
func ChainUnits(c *instances.Chain) milp.Units {
	sizes := []int64{c.A0, c.Delta0}
	var times []float64
	for _, st := range c.Stages {
		sizes = append(sizes, st.A, st.ABar, st.Delta, st.OF, st.OB)
		times = append(times, st.UF, st.UB)
	}
	return milp.ChooseUnits(sizes, times)
}
