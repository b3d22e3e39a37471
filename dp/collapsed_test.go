package dp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// nonIncreasing makes ω_a (and δ = a) non-increasing along the stages, keeping ā ≥ a: the
// chains of the persistence condition of CollapsedExact.
func nonIncreasing(c *instances.Chain) *instances.Chain {
	c = c.Clone()
	a := make([]int64, c.Len())
	for i := range c.Stages {
		a[i] = c.Stages[i].A
	}
	slices.Sort(a)
	slices.Reverse(a)
	for i := range c.Stages {
		st := &c.Stages[i]
		st.ABar += a[i] - st.A
		st.A, st.Delta = a[i], a[i]
	}
	return c
}

// TestCollapsedBelowOracle: on seeded random integer chains (L+1 ≤ 7), C_FL collapsed is never
// above the exhaustive optimum and is infinite only where nothing fits, at every budget from
// the smallest feasible one −1 to +14, with and without the source tables S_k. On chains with ω_a non-increasing and δ = a, P = C_MP =
// the optimum (the persistence condition, docs/dp.md).
func TestCollapsedBelowOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 23))
	pairs, equal, monotone, infeasible := 0, 0, 0, 0
	for i := 0; i < 120; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(6), MaxSize: 7, MaxTime: 6, Integer: true,
			WithABar: i%2 == 0, WithOverheads: i%3 != 0, WithDelta: i%5 == 0})
		mono := i%4 == 3
		if mono {
			c = nonIncreasing(c)
		}
		lo := verify.MinBudget(c)
		top := lo + 14
		col, err := NewCollapsedExact(c, top, ExactOptions{})
		require.NoError(t, err)
		// Without the source tables (as on chains with many sources): a weaker bound, still ≤.
		keep := maxSources
		maxSources = -1
		weak, err := NewCollapsedExact(c, top, ExactOptions{})
		maxSources = keep
		require.NoError(t, err)
		pe, err := NewPersistentExact(c, top, ExactOptions{})
		require.NoError(t, err)
		for b := lo - 1; b <= top; b++ {
			_, opt, ok, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			lb, feasible := col.Bound(b)
			wlb, wfeasible := weak.Bound(b)
			require.True(t, !feasible || wfeasible && wlb <= lb*(1+1e-12), "chain %d budget %d: the source tables only tighten", i, b)
			pg, err := pe.Solve(b)
			require.NoError(t, err)
			pairs++
			if !feasible {
				require.False(t, ok, "chain %d budget %d: collapsed infinite where the optimum is %g\n%s", i, b, opt, dump(c))
				infeasible++
			}
			if !ok {
				require.False(t, pg.Feasible)
				continue
			}
			require.LessOrEqual(t, lb, opt+1e-9, "chain %d budget %d\n%s", i, b, dump(c))
			if lb >= opt-1e-9 {
				equal++
			}
			if mono {
				monotone++
				require.True(t, pg.Feasible, "chain %d budget %d", i, b)
				require.InDelta(t, opt, pg.Makespan, 1e-9, "persistence condition: C_MP optimal; chain %d budget %d\n%s", i, b, dump(c))
				require.InDelta(t, pg.Makespan, lb, 1e-9, "persistence condition: P = C_MP; chain %d budget %d", i, b)
			}
		}
	}
	t.Logf("%d (chain, budget) pairs: collapsed = optimum on %d, infinite (so nothing fits) on %d; %d feasible pairs under the persistence condition", pairs, equal, infeasible, monotone)
}

// TestCollapsedGiB: on GiB-scale random chains (up to 16 stages), P ≤ exact C_FL ≤ exact C_MP at
// random budgets (on ≤ 8 stages also P ≤ the exhaustive optimum = exact C_FL, whole or pruned
// by exact C_MP's makespan), P = C_MP under the persistence condition, and the frontier is a strictly
// decreasing step function whose points agree with Bound.
func TestCollapsedGiB(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 23))
	oracled := 0
	defer func() { t.Logf("%d GiB-scale (chain, budget) pairs against the exhaustive search", oracled) }()
	for i := 0; i < 16; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 3 + r.IntN(14), MaxSize: 1 << 30, MaxTime: 5e-3,
			WithABar: true, WithOverheads: i%2 == 0, WithDelta: i%3 == 0})
		mono := i%4 == 1
		if mono {
			c = nonIncreasing(c)
		}
		lo := verify.MinBudget(c)
		top := lo * 3
		col, err := NewCollapsedExact(c, top, ExactOptions{})
		require.NoError(t, err)
		fe, err := NewFloatingExact(c, top, ExactOptions{})
		require.NoError(t, err)
		pe, err := NewPersistentExact(c, top, ExactOptions{})
		require.NoError(t, err)
		pts := col.Frontier()
		for k := 1; k < len(pts); k++ {
			require.Greater(t, pts[k].Budget, pts[k-1].Budget)
			require.Less(t, pts[k].Makespan, pts[k-1].Makespan)
		}
		for _, pt := range pts {
			v, ok := col.Bound(pt.Budget)
			require.True(t, ok)
			require.Equal(t, pt.Makespan, v)
		}
		for k := 0; k < 10; k++ {
			b := lo + r.Int64N(top-lo+1)
			lb, feasible := col.Bound(b)
			ex, err := fe.Solve(b)
			require.NoError(t, err)
			pg, err := pe.Solve(b)
			require.NoError(t, err)
			require.True(t, ex.Feasible, "the smallest feasible budget is feasible")
			require.True(t, feasible)
			require.LessOrEqual(t, lb, ex.Makespan*(1+1e-12), "chain %d budget %d", i, b)
			if c.Len() <= 8 && k < 8 {
				// GiB scale against the exhaustive search itself, and C_FL pruned by exact
				// C_MP's makespan as certify builds it.
				_, opt, ok, err := oracle.Remat(c, b, verify.RematOptions{})
				require.NoError(t, err)
				require.True(t, ok)
				require.InDelta(t, opt, ex.Makespan, 1e-9*opt, "chain %d budget %d", i, b)
				require.LessOrEqual(t, lb, opt*(1+1e-12), "chain %d budget %d", i, b)
				if pg.Feasible {
					cut, err := NewFloatingExact(c, b, ExactOptions{Cutoff: pg.Makespan})
					require.NoError(t, err)
					r, err := cut.Solve(b)
					require.NoError(t, err)
					require.InDelta(t, opt, r.Makespan, 1e-9*opt, "chain %d budget %d", i, b)
				}
				oracled++
			}
			if pg.Feasible {
				require.LessOrEqual(t, ex.Makespan, pg.Makespan*(1+1e-12))
			}
			if mono {
				require.True(t, pg.Feasible)
				require.InDelta(t, pg.Makespan, lb, 1e-12*pg.Makespan, "chain %d budget %d", i, b)
				require.InDelta(t, pg.Makespan, ex.Makespan, 1e-12*pg.Makespan, "chain %d budget %d", i, b)
			}
		}
	}
}

// TestCollapsedNoBudget: below ω_a^0 nothing fits, and Bound says so.
func TestCollapsedNoBudget(t *testing.T) {
	c := instances.Toy()
	col, err := NewCollapsedExact(c, instances.ToyBudget, ExactOptions{})
	require.NoError(t, err)
	v, ok := col.Bound(c.A0 - 1)
	assert.False(t, ok)
	assert.True(t, math.IsInf(v, 1))
	v, ok = col.Bound(instances.ToyBudget)
	assert.True(t, ok)
	assert.InDelta(t, 47.42e-3, v, 1e-12, "004 §3.2: the toy's optimum at 90 MiB")
}

// TestCollapsedSharesRows: the table built from a C_MP table (sharing its rows where they are
// P's) gives P's own value, whole or pruned, on random chains with and without monotone runs,
// and on chains where every row is shared.
func TestCollapsedSharesRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 23))
	for i := 0; i < 40; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(20), MaxSize: 1 << 30, MaxTime: 5e-3,
			WithABar: true, WithOverheads: i%2 == 0, WithDelta: i%3 == 0})
		switch i % 3 {
		case 1:
			c = nonIncreasing(c)
		case 2: // a^1 small, the rest non-increasing: ResNet's shape
			c = nonIncreasing(c)
			c.Stages[0].A, c.Stages[0].Delta = 1, 1
		}
		lo := verify.MinBudget(c)
		b := lo + r.Int64N(2*lo)
		want, err := NewCollapsedExact(c, b, ExactOptions{})
		require.NoError(t, err)
		wv, wok := want.Bound(b)
		pe, err := NewPersistentExact(c, b, ExactOptions{})
		require.NoError(t, err)
		got, err := pe.Collapsed(ExactOptions{})
		require.NoError(t, err)
		v, ok := got.Bound(b)
		require.Equal(t, wok, ok, "chain %d", i)
		require.Equal(t, wv, v, "chain %d", i)
		require.Equal(t, want.Frontier(), got.Frontier(), "chain %d", i)
		res, err := pe.Solve(b)
		require.NoError(t, err)
		if !res.Feasible {
			continue
		}
		cut, err := NewPersistentExact(c, b, ExactOptions{Cutoff: res.Makespan})
		require.NoError(t, err)
		pc, err := cut.Collapsed(ExactOptions{Cutoff: res.Makespan})
		require.NoError(t, err)
		v, ok = pc.Bound(b)
		require.True(t, ok)
		require.Equal(t, wv, v, "chain %d, pruned", i)
		if i%3 == 1 {
			require.InDelta(t, res.Makespan, v, 1e-12*res.Makespan, "every row shared: P = C_MP")
		}
	}
}

// TestCollapsedZoo: on zoo chains (GiB scale) at budgets from the smallest feasible one to
// the store-all peak, C_FL collapsed is never above a verified schedule (exact and slotted
// C_MP, revolve, the best checkpoint_sequential) nor above exact C_FL where that is in reach,
// and equals exact C_MP — so proves it optimal — on every chain whose sizes make the rows
// shared (GPT-2, BERT) and, as measured, on the ResNets and Inception v3 (DenseNet-121: up
// to 1.7 % below). The tables are pruned by the slotted C_MP's makespan, as certify does.
func TestCollapsedZoo(t *testing.T) {
	type zc struct {
		name   string
		c      *instances.Chain
		fl     bool // exact C_FL within reach (compared)
		closes bool // collapsed = exact C_MP at every budget tested
	}
	var chains []zc
	add := func(name string, c *instances.Chain, err error, fl, closes bool) {
		require.NoError(t, err, name)
		chains = append(chains, zc{name, c, fl, closes})
	}
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 50, Image: 224, Batch: 32})
	add("resnet50", c, err, true, true)
	c, err = zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1024, Batch: 8})
	add("gpt2-small", c, err, true, true)
	c, err = zoo.Transformer(zoo.TransformerConfig{Kind: "bert", Hidden: 1024, Heads: 16, Layers: 24, SeqLen: 512, Batch: 32, DType: "bf16", Device: "h100"})
	add("bert-large", c, err, false, true)
	c, err = zoo.DenseNet(zoo.CNNConfig{Depth: 121, Image: 224, Batch: 16})
	add("densenet121", c, err, false, false)
	c, err = zoo.InceptionV3(zoo.CNNConfig{Image: 299, Batch: 32})
	add("inception", c, err, true, false)
	if !testing.Short() {
		c, err = zoo.ResNet(zoo.CNNConfig{Depth: 152, Image: 224, Batch: 32})
		add("resnet152", c, err, false, true)
	}
	for _, z := range chains {
		c := z.c
		lo := verify.MinBudget(c)
		all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		for _, p := range []int64{0, 25, 50, 75} {
			b := lo + (all.Peak-lo)*p/100
			sl, err := SolvePersistent(c, b, Options{})
			require.NoError(t, err)
			pe, err := NewPersistentExact(c, b, ExactOptions{Cutoff: sl.Makespan})
			require.NoError(t, err)
			ex, err := pe.Solve(b)
			require.NoError(t, err)
			col, err := pe.Collapsed(ExactOptions{Cutoff: ex.Makespan})
			require.NoError(t, err)
			lb, ok := col.Bound(b)
			require.True(t, ok, "%s at %d %%", z.name, p)
			verified := []float64{}
			if ex.Feasible {
				verified = append(verified, ex.Makespan)
			}
			if r, err := SolvePersistent(c, b, Options{}); err == nil && r.Feasible {
				verified = append(verified, r.Makespan)
			}
			if rv, err := NewRevolve(c, b, Options{}); err == nil {
				if r, err := rv.Solve(b); err == nil && r.Feasible {
					verified = append(verified, r.Makespan)
				}
			}
			if r, ok, err := checkpoint.BestSequential(c, b); err == nil && ok {
				verified = append(verified, r.Makespan)
			}
			for _, v := range verified {
				require.LessOrEqual(t, lb, v*(1+1e-12), "%s at %d %%", z.name, p)
			}
			if z.fl {
				fe, err := NewFloatingExact(c, b, ExactOptions{Cutoff: ex.Makespan})
				require.NoError(t, err)
				fo, err := fe.Solve(b)
				require.NoError(t, err)
				require.LessOrEqual(t, lb, fo.Makespan*(1+1e-12), "%s at %d %%", z.name, p)
				t.Logf("%s at %d %%: exact C_FL %.6g", z.name, p, fo.Makespan)
			}
			t.Logf("%s at %d %%: exact C_MP %.6g, collapsed %.6g", z.name, p, ex.Makespan, lb)
			if z.closes {
				require.InDelta(t, ex.Makespan, lb, 1e-12*ex.Makespan, "%s at %d %%: collapsed meets exact C_MP", z.name, p)
			}
		}
	}
}
