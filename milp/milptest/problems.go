package milptest

import (
	"math"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// Problem is one conformance case: a model with a known outcome.
type Problem struct {
	Name   string
	Reason string // what the case exercises
	Build  func() *model.Model
	// Status is the expected status; for Unbounded, InfeasibleOrUnbounded is also accepted.
	Status milp.Status
	// Objective is the optimum when Status is Optimal.
	Objective float64
	// Integer marks models with integer or binary variables (needs Capabilities.Integer).
	Integer bool
	// InfiniteIntegers marks models with an integer variable of infinite bound.
	InfiniteIntegers bool
}

var inf = math.Inf(1)

// expr builds Σ c_k·v_k from alternating (var, coef) pairs.
func expr(pairs ...any) model.Expr {
	var e model.Expr
	for i := 0; i < len(pairs); i += 2 {
		e.Add(pairs[i].(model.Var), toF(pairs[i+1]))
	}
	return e
}

func toF(x any) float64 {
	switch v := x.(type) {
	case int:
		return float64(v)
	case float64:
		return v
	}
	panic("milptest: bad coefficient")
}

// Problems returns the conformance cases. Each Build returns a fresh model.
func Problems() []Problem {
	return []Problem{
		{Name: "lp-basic", Reason: "two-variable LP with a unique vertex optimum", Status: milp.Optimal, Objective: 36,
			Build: func() *model.Model {
				// max 3x + 5y, x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18 → (2, 6), 36 (Dantzig's example).
				m := model.New("lp-basic")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddLE("c1", expr(x, 1), 4)
				m.AddLE("c2", expr(y, 2), 12)
				m.AddLE("c3", expr(x, 3, y, 2), 18)
				m.SetObjective(model.Maximize, expr(x, 3, y, 5))
				return m
			}},
		{Name: "lp-min-ge", Reason: "minimization with ≥ rows (diet-style)", Status: milp.Optimal, Objective: 7,
			Build: func() *model.Model {
				// min 2x + 3y, x + y ≥ 3, x + 2y ≥ 4 → (2, 1): 7.
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddGE("a", expr(x, 1, y, 1), 3)
				m.AddGE("b", expr(x, 1, y, 2), 4)
				m.SetObjective(model.Minimize, expr(x, 2, y, 3))
				return m
			}},
		{Name: "lp-infeasible", Reason: "contradictory rows", Status: milp.Infeasible,
			Build: func() *model.Model {
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddLE("a", expr(x, 1, y, 1), 1)
				m.AddGE("b", expr(x, 1, y, 1), 2)
				m.SetObjective(model.Minimize, expr(x, 1))
				return m
			}},
		{Name: "lp-unbounded", Reason: "objective unbounded along a ray", Status: milp.Unbounded,
			Build: func() *model.Model {
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddGE("a", expr(x, 1, y, -1), 1)
				m.SetObjective(model.Maximize, expr(x, 1, y, 1))
				return m
			}},
		{Name: "lp-free-var", Reason: "a free variable must go negative", Status: milp.Optimal, Objective: -5,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddContinuous("x", math.Inf(-1), inf)
				y := m.AddContinuous("y", 0, 3)
				m.AddGE("a", expr(x, 1, y, 1), -2)
				m.SetObjective(model.Minimize, expr(x, 1))
				return m
			}},
		{Name: "lp-negative-bounds", Reason: "variables bounded in negative ranges", Status: milp.Optimal, Objective: -13,
			Build: func() *model.Model {
				// min x + 2y, x ∈ [−5, −1], y ∈ [−4, 2], x + y ≥ −8 → x = −5... x + 2y: x=−4,y=−4 → −12; x=−5,y=−3 → −11;
				// best: y as low as possible: y = −4, then x ≥ −4 → −4 − 8 = −12? Optimum −13 needs x + 2y = −13:
				// x + y ≥ −9 instead.
				m := model.New("")
				x := m.AddContinuous("x", -5, -1)
				y := m.AddContinuous("y", -4, 2)
				m.AddGE("a", expr(x, 1, y, 1), -9)
				m.SetObjective(model.Minimize, expr(x, 1, y, 2))
				return m
			}},
		{Name: "lp-equalities", Reason: "a square system of equalities", Status: milp.Optimal, Objective: 5,
			Build: func() *model.Model {
				// x + y = 3, x − y = 1 → (2, 1); min x + 3y = 5.
				m := model.New("")
				x, y := m.AddContinuous("x", math.Inf(-1), inf), m.AddContinuous("y", math.Inf(-1), inf)
				m.AddEq("e1", expr(x, 1, y, 1), 3)
				m.AddEq("e2", expr(x, 1, y, -1), 1)
				m.SetObjective(model.Minimize, expr(x, 1, y, 3))
				return m
			}},
		{Name: "lp-ranged", Reason: "ranged rows on both sides", Status: milp.Optimal, Objective: 12,
			Build: func() *model.Model {
				// max 2x + y, 1 ≤ x + y ≤ 6, −2 ≤ x − y ≤ 2, x, y ≥ 0 → x = 4, y = 2: 10?
				// x − y ≤ 2 and x + y ≤ 6 → x = 4, y = 2 → 10; with 3x + y: 14. Use max 3x: x ≤ 4 → 12.
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddRow("r1", 1, expr(x, 1, y, 1), 6)
				m.AddRow("r2", -2, expr(x, 1, y, -1), 2)
				m.SetObjective(model.Maximize, expr(x, 3))
				return m
			}},
		{Name: "lp-ranged-lower-active", Reason: "the lower side of a ranged row binds", Status: milp.Optimal, Objective: 2,
			Build: func() *model.Model {
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddRow("r", 2, expr(x, 1, y, 1), 9)
				m.SetObjective(model.Minimize, expr(x, 1, y, 1))
				return m
			}},
		{Name: "lp-empty-row", Reason: "a row without terms whose sides admit 0", Status: milp.Optimal, Objective: 1,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddContinuous("x", 1, 4)
				m.AddRow("empty", -1, model.Expr{}, 1)
				m.SetObjective(model.Minimize, expr(x, 1))
				return m
			}},
		{Name: "lp-empty-column", Reason: "a column in no row, fixed by its cost and bounds", Status: milp.Optimal, Objective: -3,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddContinuous("x", 0, 5)
				y := m.AddContinuous("unused", -3, 8)
				m.AddLE("c", expr(x, 1), 2)
				m.SetObjective(model.Minimize, expr(x, 1, y, 1))
				return m
			}},
		{Name: "lp-fixed-vars", Reason: "variables fixed by equal bounds", Status: milp.Optimal, Objective: 11,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddContinuous("x", 3, 3)
				y := m.AddContinuous("y", 0, 10)
				m.AddGE("c", expr(x, 1, y, 1), 5)
				m.SetObjective(model.Minimize, expr(x, 3, y, 1))
				return m
			}},
		{Name: "lp-no-constraints", Reason: "a model with no rows at all", Status: milp.Optimal, Objective: -7,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddContinuous("x", -2, 5)
				y := m.AddContinuous("y", 1, 3)
				m.SetObjective(model.Minimize, expr(x, 2, y, -1))
				return m
			}},
		{Name: "lp-constant-objective", Reason: "objective constant carried through (max with offset)", Status: milp.Optimal, Objective: 17.5,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddContinuous("x", 0, 5)
				e := expr(x, 2.5)
				e.Constant = 5
				m.SetObjective(model.Maximize, e)
				return m
			}},
		{Name: "lp-zero-objective", Reason: "feasibility problem, objective 0", Status: milp.Optimal, Objective: 0,
			Build: func() *model.Model {
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddEq("c", expr(x, 1, y, 1), 4)
				m.SetObjective(model.Minimize, model.Expr{})
				return m
			}},
		{Name: "lp-duplicate-coefs", Reason: "repeated terms on one variable are merged (1 + 2 − 1)", Status: milp.Optimal, Objective: 3,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddContinuous("x", 0, inf)
				m.AddGE("c", expr(x, 1, x, 2, x, -1), 6)
				m.SetObjective(model.Minimize, expr(x, 1))
				return m
			}},
		{Name: "lp-zero-coefs", Reason: "explicit zeros and cancelling terms are dropped", Status: milp.Optimal, Objective: 2,
			Build: func() *model.Model {
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddGE("c", expr(x, 1, y, 0, y, 2, y, -2), 2)
				m.SetObjective(model.Minimize, expr(x, 1, y, 0))
				return m
			}},
		{Name: "lp-degenerate", Reason: "several rows active at the optimum (degenerate vertex)", Status: milp.Optimal, Objective: 2,
			Build: func() *model.Model {
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddLE("a", expr(x, 1, y, 1), 2)
				m.AddLE("b", expr(x, 1), 2)
				m.AddLE("c", expr(x, 2, y, 1), 4)
				m.AddLE("d", expr(x, 1, y, 2), 4)
				m.SetObjective(model.Maximize, expr(x, 1, y, 0.5))
				return m
			}},
		{Name: "lp-scaled", Reason: "coefficients from 1e-6 to 1e6", Status: milp.Optimal, Objective: 2e6,
			Build: func() *model.Model {
				// 1e-6·x ≤ 2 → x ≤ 2e6; 1e6·y ≤ 3 → y ≤ 3e-6; max x + 1e6·y... = 2e6 + 3.
				// Keep the optimum round: max x with y's cost 0.
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddLE("a", expr(x, 1e-6), 2)
				m.AddLE("b", expr(y, 1e6, x, 1e-6), 5)
				m.SetObjective(model.Maximize, expr(x, 1))
				return m
			}},
		{Name: "lp-redundant-equalities", Reason: "linearly dependent equalities", Status: milp.Optimal, Objective: 4,
			Build: func() *model.Model {
				m := model.New("")
				x, y := m.AddContinuous("x", 0, inf), m.AddContinuous("y", 0, inf)
				m.AddEq("e1", expr(x, 1, y, 1), 4)
				m.AddEq("e2", expr(x, 2, y, 2), 8)
				m.SetObjective(model.Minimize, expr(x, 1, y, 1))
				return m
			}},
		{Name: "lp-infeasible-bounds-rows", Reason: "row sides incompatible with variable bounds", Status: milp.Infeasible,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddContinuous("x", 0, 1)
				y := m.AddContinuous("y", 0, 1)
				m.AddGE("c", expr(x, 1, y, 1), 3)
				m.SetObjective(model.Minimize, expr(x, 1))
				return m
			}},
		{Name: "mip-knapsack", Reason: "0-1 knapsack whose LP relaxation is fractional", Status: milp.Optimal, Objective: 220, Integer: true,
			Build: func() *model.Model {
				// Values 60, 100, 120, weights 10, 20, 30, capacity 50 → items 2 and 3: 220.
				m := model.New("")
				a, b, c := m.AddBinary("a"), m.AddBinary("b"), m.AddBinary("c")
				m.AddLE("cap", expr(a, 10, b, 20, c, 30), 50)
				m.SetObjective(model.Maximize, expr(a, 60, b, 100, c, 120))
				return m
			}},
		{Name: "mip-set-cover", Reason: "set cover with binary columns", Status: milp.Optimal, Objective: 2, Integer: true,
			Build: func() *model.Model {
				// Elements 1..4; sets {1,2}, {3,4}, {1,3}, {2,4}, {1,2,3}: two sets cover.
				m := model.New("")
				sets := [][]int{{1, 2}, {3, 4}, {1, 3}, {2, 4}, {1, 2, 3}}
				vars := make([]model.Var, len(sets))
				var obj model.Expr
				for i := range sets {
					vars[i] = m.AddBinary("")
					obj.Add(vars[i], 1)
				}
				for e := 1; e <= 4; e++ {
					var row model.Expr
					for i, s := range sets {
						for _, x := range s {
							if x == e {
								row.Add(vars[i], 1)
							}
						}
					}
					m.AddGE("", row, 1)
				}
				m.SetObjective(model.Minimize, obj)
				return m
			}},
		{Name: "mip-integer-rounding", Reason: "LP optimum fractional, integer optimum elsewhere", Status: milp.Optimal, Objective: 4, Integer: true,
			Build: func() *model.Model {
				// max x + y, 2x + 2y ≤ 9 → LP 4.5, integer 4.
				m := model.New("")
				x, y := m.AddInteger("x", 0, 10), m.AddInteger("y", 0, 10)
				m.AddLE("c", expr(x, 2, y, 2), 9)
				m.SetObjective(model.Maximize, expr(x, 1, y, 1))
				return m
			}},
		{Name: "mip-negative-integers", Reason: "integers with negative bounds", Status: milp.Optimal, Objective: -7, Integer: true,
			Build: func() *model.Model {
				// min x + y, x, y ∈ [−5, 5] ∩ ℤ, 2x + 3y ≥ −17.5 → e.g. x = −5, y = −2: −16 ≥ −17.5 → −7; x=−4,y=−3: −17 → −7.
				m := model.New("")
				x, y := m.AddInteger("x", -5, 5), m.AddInteger("y", -5, 5)
				m.AddGE("c", expr(x, 2, y, 3), -17.5)
				m.SetObjective(model.Minimize, expr(x, 1, y, 1))
				return m
			}},
		{Name: "mip-infeasible", Reason: "LP-feasible but integer-infeasible (parity)", Status: milp.Infeasible, Integer: true,
			Build: func() *model.Model {
				m := model.New("")
				x, y := m.AddInteger("x", 0, 10), m.AddInteger("y", 0, 10)
				m.AddEq("c", expr(x, 2, y, 2), 5)
				m.SetObjective(model.Minimize, expr(x, 1))
				return m
			}},
		{Name: "mip-mixed", Reason: "binary switch on a continuous flow (big-M)", Status: milp.Optimal, Objective: 14, Integer: true,
			Build: func() *model.Model {
				// min 10z + 2f, f ≥ 2, f ≤ 8z → z = 1, f = 2: 14.
				m := model.New("")
				z := m.AddBinary("z")
				f := m.AddContinuous("f", 0, inf)
				m.AddGE("demand", expr(f, 1), 2)
				m.AddLE("link", expr(f, 1, z, -8), 0)
				m.SetObjective(model.Minimize, expr(z, 10, f, 2))
				return m
			}},
		{Name: "mip-fixed-binary", Reason: "a binary fixed to 1 by its bounds", Status: milp.Optimal, Objective: 8, Integer: true,
			Build: func() *model.Model {
				m := model.New("")
				a := m.AddVar("a", model.Binary, 1, 1)
				b := m.AddBinary("b")
				m.AddLE("c", expr(a, 1, b, 1), 1)
				m.SetObjective(model.Maximize, expr(a, 8, b, 5))
				return m
			}},
		{Name: "mip-equality-knapsack", Reason: "integer equality needing branching", Status: milp.Optimal, Objective: 5, Integer: true,
			Build: func() *model.Model {
				// min x + y + z, 3x + 5y + 7z = 29, integers ≥ 0 → (3, 4, 0)=7? (1,0,... ) 3+26? 7z=... (0, 3, 2): 15+14=29 → 5.
				m := model.New("")
				x, y, z := m.AddInteger("x", 0, 20), m.AddInteger("y", 0, 20), m.AddInteger("z", 0, 20)
				m.AddEq("c", expr(x, 3, y, 5, z, 7), 29)
				m.SetObjective(model.Minimize, expr(x, 1, y, 1, z, 1))
				return m
			}},
		{Name: "mip-unbounded-integer", Reason: "integer variable unbounded in the objective direction", Status: milp.Unbounded, Integer: true, InfiniteIntegers: true,
			Build: func() *model.Model {
				m := model.New("")
				x := m.AddInteger("x", 0, inf)
				y := m.AddContinuous("y", 0, 1)
				m.AddGE("c", expr(x, 1, y, 1), 1)
				m.SetObjective(model.Maximize, expr(x, 1))
				return m
			}},
		{Name: "mip-assignment", Reason: "3×3 assignment with a unique optimum", Status: milp.Optimal, Objective: 12, Integer: true,
			Build: func() *model.Model {
				cost := [3][3]float64{{4, 1, 3}, {2, 0, 5}, {3, 2, 2}}
				// Optimum: 0→1 (1), 1→0 (2), 2→2 (2) = 5. Use max instead for 12: 0→0 4, 1→2 5, 2→1 2 = 11;
				// 0→2 3, 1→2? Max over permutations: (4,5,2)=11, (4,0,... ), (1,2,2)=5, (1,5,3)=9, (3,2,2)=7, (3,0,3)=6,
				// (4,5,2) = 11 … with cost[2][1] = 3 the max is 12.
				cost[2][1] = 3
				m := model.New("")
				var x [3][3]model.Var
				var obj model.Expr
				for i := range cost {
					for j := range cost[i] {
						x[i][j] = m.AddBinary("")
						obj.Add(x[i][j], cost[i][j])
					}
				}
				for i := 0; i < 3; i++ {
					var r, c model.Expr
					for j := 0; j < 3; j++ {
						r.Add(x[i][j], 1)
						c.Add(x[j][i], 1)
					}
					m.AddEq("", r, 1)
					m.AddEq("", c, 1)
				}
				m.SetObjective(model.Maximize, obj)
				return m
			}},
		{Name: "mip-binary-no-rows", Reason: "binaries with only an objective", Status: milp.Optimal, Objective: -4, Integer: true,
			Build: func() *model.Model {
				m := model.New("")
				a, b, c := m.AddBinary("a"), m.AddBinary("b"), m.AddBinary("c")
				m.SetObjective(model.Minimize, expr(a, -3, b, 2, c, -1))
				return m
			}},
	}
}
