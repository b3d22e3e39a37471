package model_test

import (
	"os"

	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
)

// Build a small MILP — choose at most two of three items under a weight limit — and write it
// in CPLEX LP format.
func Example() {
	m := model.New("items")
	a, b, c := m.AddBinary("a"), m.AddBinary("b"), m.AddBinary("c")
	var weight, count, value model.Expr
	weight.Add(a, 10).Add(b, 20).Add(c, 30)
	count.Add(a, 1).Add(b, 1).Add(c, 1)
	value.Add(a, 60).Add(b, 100).Add(c, 120)
	m.AddLE("weight", weight, 50)
	m.AddLE("count", count, 2)
	m.SetObjective(model.Maximize, value)
	if err := lpfile.Write(os.Stdout, m); err != nil {
		panic(err)
	}
	// Output:
	// \ Problem name: items
	// Maximize
	//  obj: + 60 a + 100 b + 120 c
	// Subject To
	//  weight: + 10 a + 20 b + 30 c <= 50
	//  count: + 1 a + 1 b + 1 c <= 2
	// Bounds
	// Binaries
	//  a b c
	// End
}
