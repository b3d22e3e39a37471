package checkmate_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/milp/checkmate"
)

// benchChainGraph is the graph of a random chain of the given number of stages (loss included),
// sizes up to 64 MiB, times up to 10 ms, ā = a, and a budget of 60% of the sum of all sizes.
func benchChainGraph(stages int) (*instances.Graph, int64) {
	g := instances.GraphFromChain(benchChain(stages))
	return g, budgetOf(g)
}

// benchChain is the chain of benchChainGraph.
func benchChain(stages int) *instances.Chain {
	r := rand.New(rand.NewPCG(uint64(stages), 11))
	c := instances.Random(r, instances.RandomParams{Stages: stages, MaxSize: 64 << 20, MaxTime: 10e-3, Integer: false, WithOverheads: true})
	c.Stages[c.Len()-1].Delta = 0
	return c
}

func budgetOf(g *instances.Graph) int64 {
	total := g.Fixed
	for _, n := range g.Nodes {
		total += n.Size
	}
	return total * 6 / 10
}

// benchDAG is a random DAG of n nodes (graphsim.RandomGraph's shape at MiB scale).
func benchDAG(n int) (*instances.Graph, int64) {
	r := rand.New(rand.NewPCG(100, uint64(n)))
	g := &instances.Graph{Name: "random-dag"}
	for j := 0; j < n; j++ {
		nd := instances.Node{Name: fmt.Sprint("n", j), Cost: float64(1+r.IntN(4)) * 1e-3, Size: int64(1+r.IntN(5)) << 20, Temp: int64(r.IntN(2)) << 20}
		if j > 0 {
			nd.Deps = []int{j - 1}
			if j > 1 && r.IntN(2) == 0 {
				nd.Deps = append(nd.Deps, r.IntN(j-1))
			}
		}
		g.Nodes = append(g.Nodes, nd)
	}
	return g, budgetOf(g) / 3
}

type benchCase struct {
	name string
	make func() (*instances.Graph, int64)
}

var benchCases = []benchCase{
	{"chain20", func() (*instances.Graph, int64) { return benchChainGraph(20) }},
	{"chain50", func() (*instances.Graph, int64) { return benchChainGraph(50) }},
	{"chain100", func() (*instances.Graph, int64) { return benchChainGraph(100) }},
	{"dag100", func() (*instances.Graph, int64) { return benchDAG(100) }},
}

// BenchmarkBuild: model building time and size (rows, cols, nonzeros as metrics).
func BenchmarkBuild(b *testing.B) {
	for _, c := range benchCases {
		g, budget := c.make()
		b.Run(c.name, func(b *testing.B) {
			var f *checkmate.Formulation
			for b.Loop() {
				var err error
				if f, err = checkmate.Build(g, budget); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(f.Model.NumRows()), "rows")
			b.ReportMetric(float64(f.Model.NumVars()), "cols")
			b.ReportMetric(float64(f.Model.NumNonzeros()), "nnz")
		})
	}
}

// BenchmarkChainExactBuild: the chain-exact model (BuildChain) of benchChainGraph's chains under
// the same budgets: building time and size.
func BenchmarkChainExactBuild(b *testing.B) {
	for _, stages := range []int{20, 50, 100} {
		c := benchChain(stages)
		_, budget := benchChainGraph(stages)
		b.Run(fmt.Sprint("chain", stages), func(b *testing.B) {
			var f *checkmate.ChainFormulation
			for b.Loop() {
				var err error
				if f, err = checkmate.BuildChain(c, budget); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(f.Model.NumRows()), "rows")
			b.ReportMetric(float64(f.Model.NumVars()), "cols")
			b.ReportMetric(float64(f.Model.NumNonzeros()), "nnz")
		})
	}
}
