package dp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

const mib = 1 << 20

// TestToy90Persistent is 004 §3.2: with 90 MiB the optimal sequence (which is persistent) takes
// 47.42 ms and peaks at 86.75 MiB; 500 slots are fine enough to find it.
func TestToy90Persistent(t *testing.T) {
	c := instances.Toy()
	for _, slots := range []int{500, 2000} {
		res, err := SolvePersistent(c, instances.ToyBudget, Options{Slots: slots})
		require.NoError(t, err)
		require.True(t, res.Feasible)
		assert.InDelta(t, 47.42e-3, res.Makespan, 1e-12, "slots %d", slots)
		assert.InDelta(t, 86.75, float64(res.Peak)/mib, 0.005)
		assert.Equal(t, "Fck^1 Fn^2 Fn^3 Fall^4 Fall^5 Fall^6 Fall^7 B^7 B^6 B^5 B^4 Fck^1 Fn^2 Fall^3 B^3 Fall^1 Fall^2 B^2 B^1",
			res.Sequence.String())
	}
}

// TestFig4Persistent is 004 Fig. 4: the best persistent makespan is 3n−2 (the optimum is 2n+2).
func TestFig4Persistent(t *testing.T) {
	for n := 4; n <= 8; n++ {
		c, err := instances.Fig4(n)
		require.NoError(t, err)
		res, err := SolvePersistent(c, instances.Fig4Budget, Options{Exact: true})
		require.NoError(t, err)
		require.True(t, res.Feasible)
		assert.Equal(t, float64(3*n-2), res.Makespan, "n=%d: %v", n, res.Sequence)
	}
}

// TestPersistentVsOracle: on random integer chains in exact mode, for every budget from the
// smallest feasible one upward, C_MP is feasible exactly when the oracle is... at least as
// slow as the exhaustive optimum, and its sequence replays (checked inside Solve).
func TestPersistentVsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 4))
	count, equal := 0, 0
	for i := 0; i < 200; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(5), MaxSize: 6, MaxTime: 5, Integer: true,
			WithABar: i%2 == 0, WithOverheads: i%3 != 0, WithDelta: i%5 == 0})
		min := verify.MinBudget(c)
		top := min + 12
		p, err := NewPersistent(c, top, Options{Exact: true})
		require.NoError(t, err)
		for b := min; b <= top; b += 2 {
			res, err := p.Solve(b)
			require.NoError(t, err)
			_, opt, ok, err := oracle.Remat(c, b, verify.RematOptions{})
			require.NoError(t, err)
			require.True(t, ok)
			if !res.Feasible {
				continue // persistent sequences may need more memory than the optimum
			}
			count++
			assert.GreaterOrEqual(t, res.Makespan, opt-1e-9, "chain %d budget %d", i, b)
			if res.Makespan <= opt+1e-9 {
				equal++
			}
		}
	}
	t.Logf("%d feasible (chain, budget) pairs, persistent optimal on %d", count, equal)
	assert.Greater(t, count, 500)
}

// TestDiscretizedNeverExceeds: with coarse random slot counts the returned sequence always fits
// the budget in bytes (sizes rounded up, budget down).
func TestDiscretizedNeverExceeds(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 300; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(12), MaxSize: 1 << 30, MaxTime: 1,
			WithABar: true, WithOverheads: true, WithDelta: i%2 == 0})
		min := verify.MinBudget(c)
		b := min + r.Int64N(3*min)
		res, err := SolvePersistent(c, b, Options{Slots: 5 + r.IntN(500)})
		require.NoError(t, err)
		if res.Feasible {
			assert.LessOrEqual(t, res.Peak, b)
		}
	}
}

func TestFrontier(t *testing.T) {
	c := instances.Toy()
	p, err := NewPersistent(c, 110*mib, Options{Slots: 1000})
	require.NoError(t, err)
	pts := p.Frontier()
	require.NotEmpty(t, pts)
	for i := 1; i < len(pts); i++ {
		assert.Greater(t, pts[i].Budget, pts[i-1].Budget)
		assert.Less(t, pts[i].Makespan, pts[i-1].Makespan)
	}
	last := pts[len(pts)-1]
	assert.InDelta(t, 37.38e-3, last.Makespan, 1e-12, "enough memory gives the store-all makespan")
	for _, pt := range pts {
		res, err := p.Solve(pt.Budget)
		require.NoError(t, err)
		require.True(t, res.Feasible)
		assert.InDelta(t, pt.Makespan, res.Makespan, 1e-12)
	}
}

func TestPersistentInfeasibleAndBadInput(t *testing.T) {
	c := instances.Toy()
	res, err := SolvePersistent(c, verify.MinBudget(c)/2, Options{})
	require.NoError(t, err)
	assert.False(t, res.Feasible)
	_, err = SolvePersistent(c, -1, Options{})
	assert.Error(t, err)
	_, err = SolvePersistent(c, 1<<40, Options{Exact: true})
	assert.ErrorContains(t, err, "too many")
}

// TestParallelFillMatchesSequential: the wavefront fill over several cores gives exactly the
// table of the sequential order (run under -race to check the synchronization).
func TestParallelFillMatchesSequential(t *testing.T) {
	c := benchChain(60)
	budget := verify.MinBudget(c) * 2
	prev := runtime.GOMAXPROCS(1)
	seq, err := NewPersistent(c, budget, Options{Slots: 400})
	runtime.GOMAXPROCS(max(prev, 4))
	require.NoError(t, err)
	par, err := NewPersistent(c, budget, Options{Slots: 400})
	runtime.GOMAXPROCS(prev)
	require.NoError(t, err)
	require.Equal(t, 1, seq.workers)
	require.Greater(t, par.workers, 1)
	assert.Equal(t, seq.flat(), par.flat())
}

// TestRevolve: revolve's sequences replay within the budget and are never faster than C_MP
// (they are a subset of persistent sequences); on the toy at 90 MiB it is strictly slower,
// since the optimum runs F_all^4 … F_all^7 ahead of their backward steps.
func TestRevolve(t *testing.T) {
	c := instances.Toy()
	rv, err := NewRevolve(c, instances.ToyBudget, Options{})
	require.NoError(t, err)
	res, err := rv.Solve(instances.ToyBudget)
	require.NoError(t, err)
	require.True(t, res.Feasible)
	assert.Greater(t, res.Makespan, 47.42e-3+1e-9)
	r := rand.New(rand.NewPCG(21, 3))
	for i := 0; i < 100; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(6), MaxSize: 7, MaxTime: 6, Integer: true,
			WithABar: true, WithOverheads: i%2 == 0})
		b := verify.MinBudget(c) + int64(r.IntN(10))
		rv, err := NewRevolve(c, b, Options{Exact: true})
		require.NoError(t, err)
		got, err := rv.Solve(b)
		require.NoError(t, err)
		mp, err := SolvePersistent(c, b, Options{Exact: true})
		require.NoError(t, err)
		if got.Feasible {
			require.True(t, mp.Feasible)
			assert.GreaterOrEqual(t, got.Makespan, mp.Makespan-1e-9)
			for k, op := range got.Sequence {
				if op.Kind == schedule.Fall {
					require.Equal(t, schedule.Op{Kind: schedule.B, Stage: op.Stage}, got.Sequence[k+1], "F_all right before B")
				}
			}
		}
	}
}

// flat is p's values row after row, as one slice.
func (p *Persistent) flat() []float64 {
	var out []float64
	for _, row := range p.rows {
		out = append(out, row...)
	}
	return out
}

// TestAllocChunks: the chunks hold whole rows, about the size asked (at least one row), rows
// rows in all; each row's slice is its own part of a chunk, in order; a closed stop
// allocates nothing.
func TestAllocChunks(t *testing.T) {
	for _, tc := range []struct{ rows, w, chunk, perChunk int }{
		{1, 1, 8, 1}, {5, 1, 32, 4}, {5, 1, 1 << 20, 5}, {9, 3, 48, 2}, {7, 100, 8, 1},
		{2_003_001, 129, chunkBytes, 32513},
	} {
		chunks, rows := allocChunks(tc.rows, tc.w, tc.chunk, nil)
		name := fmt.Sprintf("%d rows of %d, chunks of %d bytes", tc.rows, tc.w, tc.chunk)
		total := 0
		for i, c := range chunks {
			require.Zero(t, len(c)%tc.w, name)
			if i < len(chunks)-1 {
				require.Equal(t, tc.perChunk*tc.w, len(c), name)
			}
			total += len(c) / tc.w
		}
		require.Equal(t, tc.rows, total, name)
		require.Len(t, rows, tc.rows, name)
		for r, row := range rows {
			require.Len(t, row, tc.w, name)
			require.Equal(t, tc.w, cap(row), "%s: row %d may not grow into the next", name, r)
			require.Same(t, &chunks[r/tc.perChunk][(r%tc.perChunk)*tc.w], &row[0], "%s: row %d", name, r)
		}
	}
	stop := make(chan struct{})
	close(stop)
	chunks, rows := allocChunks(100, 10, 80, stop)
	require.Nil(t, chunks)
	require.Nil(t, rows)
}

// naivePersistent fills C_MP (or revolve's table) straight from the recurrence (no pruning,
// one core), with an argument table recorded as the fill did before issue 23 (strict
// comparison, C_all then s' ascending): the reference the pruned fill must equal value for
// value, and Persistent.argmin argument for argument.
func naivePersistent(p *Persistent) ([]float64, []int16) {
	sc, w := p.sc, p.m+1
	val := make([]float64, len(p.flat()))
	arg := make([]int16, len(val))
	for i := range val {
		val[i] = math.Inf(1)
	}
	row := func(s, t int) int { return p.rowOf(s, t) * w }
	for t := 1; t <= p.n; t++ {
		for s := t; s >= 1; s-- {
			o := row(s, t)
			mAll := max(sc.d[t]+sc.abar[s]+sc.of[s], sc.d[s]+sc.abar[s]+sc.d[s-1]+sc.ob[s])
			for m := 0; m <= p.m; m++ {
				if s == t {
					if m >= mAll {
						val[o+m] = sc.uf[s] + sc.ub[s]
					}
					continue
				}
				if !p.adjoint && m >= mAll && m-sc.abar[s] >= 0 {
					val[o+m] = sc.uf[s] + sc.ub[s] + val[row(s+1, t)+m-sc.abar[s]]
				}
				fwd, pre := 0, 0.0
				for s2 := s + 1; s2 <= t; s2++ {
					fwd = sc.splitPeak(s, s2, fwd)
					pre += sc.uf[s2-1]
					off := sc.a[s2-1]
					if m < sc.d[t]+fwd || m < off {
						continue
					}
					if v := pre + val[row(s2, t)+m-off] + val[row(s, s2-1)+m]; v < val[o+m] {
						val[o+m], arg[o+m] = v, int16(s2)
					}
				}
			}
		}
	}
	return val, arg
}

// requireSameTable: p's values are naive's bit for bit, and its argmin is naive's argument
// at every finite state (so every rebuilt sequence is the argument table's).
func requireSameTable(t *testing.T, p *Persistent, name string) {
	val, arg := naivePersistent(p)
	require.Equal(t, val, p.flat(), name)
	w := p.m + 1
	for s := 1; s <= p.n; s++ {
		for tt := s + 1; tt <= p.n; tt++ {
			o := p.rowOf(s, tt) * w
			for m := 0; m <= p.m; m++ {
				if !math.IsInf(val[o+m], 1) && p.argmin(s, tt, m) != int(arg[o+m]) {
					require.Failf(t, "argument differs", "%s: C_MP(%d, %d, %d): argmin %d, table %d", name, s, tt, m, p.argmin(s, tt, m), arg[o+m])
				}
			}
		}
	}
}

// TestPrunedFillEqualsRecurrence: the pruned fill (lower bounds per split and per block of
// budgets, issue 14) gives exactly the table of the plain recurrence, and argmin (issue 23)
// exactly its arguments, for C_MP and revolve, on random chains and on zoo chains.
func TestPrunedFillEqualsRecurrence(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 1))
	for i := 0; i < 40; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(40), MaxSize: 64 << 20, MaxTime: 5e-3,
			WithABar: true, WithOverheads: i%2 == 0, WithDelta: i%3 == 0})
		budget := verify.MinBudget(c) * int64(1+r.IntN(4))
		opt := Options{Slots: 50 + r.IntN(300)}
		if i%2 == 1 {
			// Chunks of 1 to 4 rows (and the last one shorter): rows in many chunks.
			opt.chunkBytes = (opt.Slots + 1) * 8 * (1 + r.IntN(5))
		}
		p, err := NewPersistent(c, budget, opt)
		require.NoError(t, err)
		requireSameTable(t, p, fmt.Sprintf("chain %d", i))
		if i%4 == 0 {
			rv, err := NewRevolve(c, budget, opt)
			require.NoError(t, err)
			requireSameTable(t, rv, fmt.Sprintf("revolve, chain %d", i))
		}
	}
	// Integer times: many ties between candidates.
	for i := 0; i < 40; i++ {
		c := instances.Random(r, instances.RandomParams{Stages: 2 + r.IntN(12), MaxSize: 7, MaxTime: 3, Integer: true,
			WithABar: true, WithOverheads: i%2 == 0})
		p, err := NewPersistent(c, verify.MinBudget(c)+int64(r.IntN(12)), Options{Exact: true})
		require.NoError(t, err)
		requireSameTable(t, p, fmt.Sprintf("integer chain %d", i))
	}
	for _, depth := range []int{18, 50} {
		c, err := zoo.ResNet(zoo.CNNConfig{Depth: depth, Image: 224, Batch: 32})
		require.NoError(t, err)
		for _, k := range []int64{2, 3, 5} {
			p, err := NewPersistent(c, verify.MinBudget(c)*k, Options{Slots: 200})
			require.NoError(t, err)
			requireSameTable(t, p, fmt.Sprintf("ResNet-%d at %d× the least budget", depth, k))
		}
	}
}
