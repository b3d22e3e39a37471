package dp

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/verify"
)

// benchChain is a ResNet-like random chain: sizes of several MiB, ā ≥ a, overheads, ms times.
func benchChain(stages int) *instances.Chain {
	r := rand.New(rand.NewPCG(339, 1))
	return instances.Random(r, instances.RandomParams{Stages: stages, MaxSize: 64 << 20, MaxTime: 5e-3,
		WithABar: true, WithOverheads: true})
}

// BenchmarkPersistent339 is C_MP on a 339-stage chain (ResNet-1001 scale, 004 §5.3) with
// S = 500 slots at a budget halfway between the smallest feasible one and store-all.
// Target (issue 4): < 2 s on a 2-core machine; rotor's C implementation reports up to 20 s.
func BenchmarkPersistent339(b *testing.B) {
	c := benchChain(339)
	budget := verify.MinBudget(c) * 3
	b.ReportAllocs()
	for b.Loop() {
		res, err := SolvePersistent(c, budget, Options{Slots: 500})
		if err != nil || !res.Feasible {
			b.Fatal(err, res.Feasible)
		}
	}
}

// BenchmarkFloating30 is C_FL on L = 30 (31 stages) with S = 100. Target: < 10 s.
func BenchmarkFloating30(b *testing.B) {
	c := benchChain(31)
	budget := verify.MinBudget(c) * 2
	b.ReportAllocs()
	for b.Loop() {
		res, err := SolveFloating(c, budget, Options{Slots: 100})
		if err != nil || !res.Feasible {
			b.Fatal(err, res.Feasible)
		}
	}
}

// resnet1001 is ResNet-1001 at 224×224, batch 32 (fp32, V100 profile; 337 stages), with the
// budgets at 25, 50 and 75 % between the smallest feasible one and the store-all peak (issue 14).
func resnet1001(b testing.TB) (*instances.Chain, []int64) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 1001, Image: 224, Batch: 32})
	if err != nil {
		b.Fatal(err)
	}
	lo := verify.MinBudget(c)
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var budgets []int64
	for _, p := range []int64{25, 50, 75} {
		budgets = append(budgets, lo+(all.Peak-lo)*p/100)
	}
	return c, budgets
}

// BenchmarkPersistentResNet1001 is C_MP, S = 500, on ResNet-1001 224/32 at 25/50/75 % budgets
// (one op = the three solves). Target (issue 14): ≤ 1 s per solve for the whole process.
func BenchmarkPersistentResNet1001(b *testing.B) {
	c, budgets := resnet1001(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, budget := range budgets {
			res, err := SolvePersistent(c, budget, Options{Slots: 500})
			if err != nil || !res.Feasible {
				b.Fatal(err, res.Feasible)
			}
		}
	}
}

// BenchmarkPersistentResNet1001Peers is make bench-peers' memsched side (issue 23): C_MP on
// ResNet-1001 224/32 at 25/50/75 %, S = 200 and 500 (one op = the three budgets' solves: fill,
// rebuild and replay).
func BenchmarkPersistentResNet1001Peers(b *testing.B) {
	c, budgets := resnet1001(b)
	for _, slots := range []int{200, 500} {
		b.Run(fmt.Sprintf("S%d", slots), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, budget := range budgets {
					res, err := SolvePersistent(c, budget, Options{Slots: slots})
					if err != nil || !res.Feasible {
						b.Fatal(err, res.Feasible)
					}
				}
			}
		})
	}
}

// BenchmarkPersistentResNet1001Frontier50 fills one C_MP table (S = 500) at the 75 % budget of
// ResNet-1001 224/32 and solves (rebuild and replay) 50 budgets from it, spread from the
// smallest feasible one. Target (issue 14): ≤ 1.2× one solve (BenchmarkPersistentResNet1001/3).
func BenchmarkPersistentResNet1001Frontier50(b *testing.B) {
	c, budgets := resnet1001(b)
	lo, top := verify.MinBudget(c), budgets[2]
	b.ReportAllocs()
	var fill, solves time.Duration
	for b.Loop() {
		start := time.Now()
		p, err := NewPersistent(c, top, Options{Slots: 500})
		if err != nil {
			b.Fatal(err)
		}
		fill += time.Since(start)
		start = time.Now()
		for k := 0; k < 50; k++ {
			if _, err := p.Solve(lo + (top-lo)*int64(k)/49); err != nil {
				b.Fatal(err)
			}
		}
		solves += time.Since(start)
	}
	// The frontier costs (fill + 50 solves) / (fill + 1 solve) ≤ 1 + 49·solve/fill.
	b.ReportMetric(fill.Seconds()/float64(b.N), "fill-s/op")
	b.ReportMetric(solves.Seconds()/float64(b.N)/50, "solve-s")
}

func zooResNet(b testing.TB, depth int) (*instances.Chain, int64) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: depth, Image: 224, Batch: 32})
	if err != nil {
		b.Fatal(err)
	}
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return c, all.Peak
}

// BenchmarkFloatingExactResNet101 is the exact C_FL frontier (bytes, no slots) of ResNet-101
// 224/32 up to its store-all peak: the optimum of 004's model at every budget.
func BenchmarkFloatingExactResNet101(b *testing.B) { benchFloatingExact(b, 101) }

// BenchmarkFloatingExactResNet152 is the same on ResNet-152 (53 stages).
func BenchmarkFloatingExactResNet152(b *testing.B) { benchFloatingExact(b, 152) }

func benchFloatingExact(b *testing.B, depth int) {
	c, peak := zooResNet(b, depth)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewFloatingExact(c, peak, ExactOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPersistentExactResNet152 is the exact C_MP frontier of ResNet-152 224/32.
func BenchmarkPersistentExactResNet152(b *testing.B) {
	c, peak := zooResNet(b, 152)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewPersistentExact(c, peak, ExactOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPersistentExactResNet1001 is the exact C_MP frontier of ResNet-1001 224/32 up to
// its store-all peak (issue 14 target: < 60 s).
func BenchmarkPersistentExactResNet1001(b *testing.B) {
	c, peak := zooResNet(b, 1001)
	b.ReportAllocs()
	for b.Loop() {
		p, err := NewPersistentExact(c, peak, ExactOptions{})
		if err != nil {
			b.Fatal(err)
		}
		st := p.Stats()
		b.ReportMetric(float64(st.Breakpoints), "breakpoints")
		b.ReportMetric(float64(st.MaxBreakpoints), "max-row")
		b.ReportMetric(float64(st.Top), "top")
	}
}

// certifyBudgetsOf returns a zoo chain and its budgets at 25/50/75 % between the smallest
// feasible one and the store-all peak (issue 23's points).
func certifyBudgetsOf(b testing.TB, c *instances.Chain, err error) (*instances.Chain, []int64) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
	lo := verify.MinBudget(c)
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return c, []int64{lo + (all.Peak-lo)/4, lo + (all.Peak-lo)/2, lo + (all.Peak-lo)*3/4}
}

// benchCertifyBound is what certify builds for the remat bracket at each budget: the slotted
// C_MP (S = 500, its makespan the cutoff), exact C_MP pruned by it, C_FL collapsed from its
// rows and, when that stays below, exact C_FL pruned by exact C_MP's makespan; it fails
// unless the bracket closes.
func benchCertifyBound(b *testing.B, c *instances.Chain, budgets []int64) {
	b.ReportAllocs()
	for b.Loop() {
		for _, budget := range budgets {
			sl, err := SolvePersistent(c, budget, Options{})
			if err != nil || !sl.Feasible {
				b.Fatal(err, sl.Feasible)
			}
			pe, err := NewPersistentExact(c, budget, ExactOptions{Cutoff: sl.Makespan})
			if err != nil {
				b.Fatal(err)
			}
			ex, err := pe.Solve(budget)
			if err != nil {
				b.Fatal(err)
			}
			col, err := pe.Collapsed(ExactOptions{Cutoff: ex.Makespan})
			if err != nil {
				b.Fatal(err)
			}
			if lb, _ := col.Bound(budget); ex.Makespan <= lb*(1+1e-9) {
				continue
			}
			fe, err := NewFloatingExact(c, budget, ExactOptions{Cutoff: ex.Makespan})
			if err != nil {
				b.Fatal(err)
			}
			if r, err := fe.Solve(budget); err != nil || r.Makespan < ex.Makespan*(1-1e-9) {
				b.Fatal(err, "the optimum is not persistent here", r.Makespan, ex.Makespan)
			}
		}
	}
}

// BenchmarkCertifyBoundResNet1001 is issue 23's ResNet-1001 (32×32, batch 32, 337 stages) at
// 25/50/75 % (one op = the three): exact C_MP proven optimal by C_FL collapsed. Target: each
// point within 60 s (certify's whole process).
func BenchmarkCertifyBoundResNet1001(b *testing.B) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 1001, Image: 32, Batch: 32})
	c, budgets := certifyBudgetsOf(b, c, err)
	benchCertifyBound(b, c, budgets)
}

// BenchmarkCertifyBoundDenseNet201 is DenseNet-201 (105 stages) at 25/50/75 %: C_FL collapsed
// stays below, exact C_FL pruned by exact C_MP's makespan closes the bracket.
func BenchmarkCertifyBoundDenseNet201(b *testing.B) {
	c, err := zoo.DenseNet(zoo.CNNConfig{Depth: 201, Image: 224, Batch: 32})
	c, budgets := certifyBudgetsOf(b, c, err)
	benchCertifyBound(b, c, budgets)
}
