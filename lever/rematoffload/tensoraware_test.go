package rematoffload_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// This file measures where the link credit (dp.LinkCredit) is loose, for issue 31's open zoo
// points (docs/remat-offload.md, "Which side the CNNs' gap is on"). It holds a tensor-aware
// relaxation of one 004 sequence, its minimum over every sequence of a tiny chain, and three
// measurements, all behind MEMSCHED_COMBINED_TENSOR_AWARE=1 (scripts/tensor-aware-zoo.sh):
// on random tiny chains and on zoo-shaped tiny chains against the exact optimum, and on the
// zoo's open points against the link credit's own best sequences.

// tensorAwareJob is a stored tensor that might be away during an operation: moved whole, its
// offload after release (its producer's end, in compute time from the start), its prefetch
// done before its next reader starts, that is releaseB before the end in reversed time.
type tensorAwareJob struct {
	size              int64
	release, releaseB float64
}

// mostBytesBy is the most bytes of whole jobs one link of bandwidth beta moves by due, each
// after its release: the Pareto set of (finish, bytes) over subsets run in release order (for a
// common due time that order is best), past 4096 points merged pairwise into the earlier
// finish with the more bytes (it only overstates).
func mostBytesBy(js []tensorAwareJob, release func(tensorAwareJob) float64, beta, due float64) int64 {
	js = append([]tensorAwareJob(nil), js...)
	sort.Slice(js, func(a, b int) bool { return release(js[a]) < release(js[b]) })
	type pt struct {
		f float64
		b int64
	}
	front := []pt{{0, 0}}
	for _, j := range js {
		all := append([]pt(nil), front...)
		for _, p := range front {
			if f := math.Max(p.f, release(j)) + float64(j.size)/beta; f <= due*(1+1e-12) {
				all = append(all, pt{f, p.b + j.size})
			}
		}
		sort.Slice(all, func(a, b int) bool {
			if all[a].f != all[b].f {
				return all[a].f < all[b].f
			}
			return all[a].b > all[b].b
		})
		front = front[:0]
		for _, p := range all {
			if len(front) == 0 || p.b > front[len(front)-1].b {
				front = append(front, p)
			}
		}
		for len(front) > 4096 {
			m := 0
			for i := 0; i < len(front); i += 2 {
				front[m] = pt{front[i].f, front[min(i+1, len(front)-1)].b}
				m++
			}
			front = front[:m]
		}
	}
	return front[len(front)-1].b
}

// reads says whether op needs stage j's stored tensor on the GPU: F^k reads a^{k−1} (or
// ā^{k−1}), B^ℓ reads ā^ℓ and a^{ℓ−1} (004 Table 1).
func reads(op schedule.Op, j int) bool {
	if op.Kind == schedule.B {
		return j == op.Stage || j == op.Stage-1
	}
	return j == op.Stage-1
}

// tensorAware is the tensor-aware relaxation of one valid 004 sequence seq: a lower bound on
// the makespan of every strict schedule (verify/combined) whose compute stream is seq, when
// that is below upper (else upper).
//
// The argument, per operation o over [s, e] whose 004 memory exceeds M by x: the tensors away
// then are stored ones that o does not read, whole, at least x bytes; each was offloaded after
// its producer in seq ended (at least the compute before it) and before s ≤ T − (compute from
// o on), and comes back after e ≥ (compute up to o's end) and before its next reader in seq
// starts (at most T − the compute from that reader on; T if none reads it again or Fall
// replaces it), one transfer at a time. So some set of such tensors of x bytes or more fits
// both windows. Where o has at most 10 candidates every subset is tried; past that the two
// windows are checked apart (the most bytes each can move, both at least x): weaker, still a
// relaxation. Each operation is checked alone (the link's time is not shared between them),
// and the least T that passes every check is found by bisection (the windows grow with T).
//
// The link credit gives every stored byte the same chance to be away; this relaxation asks
// which tensors the sequence holds: a^1 of 10 B cannot be away where the sequence stores ā^1
// of 128 B, and a tensor that o reads cannot be away at all.
func tensorAware(c *instances.Chain, M int64, beta float64, seq schedule.Sequence, upper float64) (float64, error) {
	n := c.Len()
	type step struct {
		op     schedule.Op
		dur    float64
		mem    int64
		before verify.RematState
		prod   []int // the index of the operation that produced each stage's stored tensor (−1: a^0)
	}
	st := verify.InitialState(c)
	prod := make([]int, n+1)
	for j := range prod {
		prod[j] = -1
	}
	steps := make([]step, 0, len(seq))
	for i, op := range seq {
		before := st.Clone()
		mem, dur, err := st.Apply(c, op)
		if err != nil {
			return 0, fmt.Errorf("operation %d (%v): %w", i, op, err)
		}
		steps = append(steps, step{op, dur, mem, before, append([]int(nil), prod...)})
		if op.Kind != schedule.B {
			prod[op.Stage] = i
		}
	}
	if st.T != 0 {
		return 0, fmt.Errorf("the sequence ends before δ^0")
	}
	size := func(s verify.RematState, j int) int64 {
		switch s.Acts[j] {
		case verify.Plain:
			return c.SizeA(j)
		case verify.Full:
			return c.Stage(j).ABar
		}
		return 0
	}
	m := len(steps)
	pre := make([]float64, m+1)
	for i, s := range steps {
		pre[i+1] = pre[i] + s.dur
	}
	total := pre[m]
	jobs := make([][]tensorAwareJob, m)
	for i, s := range steps {
		if s.mem <= M {
			continue
		}
		for j := 0; j < n; j++ {
			w := size(s.before, j)
			if w == 0 || reads(s.op, j) {
				continue
			}
			rel := 0.0
			if s.prod[j] >= 0 {
				rel = pre[s.prod[j]+1]
			}
			relB := 0.0
			for k := i + 1; k < m; k++ {
				if o := steps[k].op; reads(o, j) {
					relB = total - pre[k]
					break
				} else if o.Stage == j && o.Kind == schedule.Fall {
					break // replaced by ā^j: discarded where it is, no prefetch
				}
			}
			jobs[i] = append(jobs[i], tensorAwareJob{w, rel, relB})
		}
	}
	fwd := func(j tensorAwareJob) float64 { return j.release }
	bwd := func(j tensorAwareJob) float64 { return j.releaseB }
	fits := func(T float64) bool {
		for i, s := range steps {
			x := s.mem - M
			if x <= 0 {
				continue
			}
			js := jobs[i]
			off, on := T-(total-pre[i]), T-pre[i+1]
			if len(js) > 10 {
				if min(mostBytesBy(js, fwd, beta, off), mostBytesBy(js, bwd, beta, on)) < x {
					return false
				}
				continue
			}
			ok := false
			for mask := 1; mask < 1<<len(js) && !ok; mask++ {
				var sum int64
				var sel []tensorAwareJob
				for b := range js {
					if mask>>b&1 == 1 {
						sum += js[b].size
						sel = append(sel, js[b])
					}
				}
				ok = sum >= x && mostBytesBy(sel, fwd, beta, off) >= sum && mostBytesBy(sel, bwd, beta, on) >= sum
			}
			if !ok {
				return false
			}
		}
		return true
	}
	if total >= upper || !fits(upper) {
		return upper, nil
	}
	lo, hi := total, upper
	if fits(lo) {
		return lo, nil
	}
	for k := 0; k < 50 && hi-lo > 1e-12*hi; k++ {
		if mid := lo + (hi-lo)/2; fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, nil
}

// tensorAwareAll is tensorAware minimized over every valid 004 sequence of c whose compute is
// below upper (a depth-first search, each stage's forward at most 5·n operations deep): a lower
// bound on every strict schedule below upper, or upper. ok is false past maxVisits.
func tensorAwareAll(c *instances.Chain, M int64, beta, upper float64, maxVisits int) (bound float64, sequences int, ok bool) {
	n := c.Len()
	var ops []schedule.Op
	for l := 1; l <= n; l++ {
		ops = append(ops, schedule.Op{Kind: schedule.B, Stage: l})
	}
	for _, k := range []schedule.OpKind{schedule.Fall, schedule.Fck, schedule.Fn} {
		for l := 1; l <= n; l++ {
			ops = append(ops, schedule.Op{Kind: k, Stage: l})
		}
	}
	best, visits := upper, 0
	var seq schedule.Sequence
	var dfs func(st verify.RematState, cost float64)
	dfs = func(st verify.RematState, cost float64) {
		if visits++; visits > maxVisits {
			return
		}
		if st.T == 0 {
			sequences++
			if b, err := tensorAware(c, M, beta, seq, best); err == nil {
				best = min(best, b)
			}
			return
		}
		rest := 0.0 // every backward left runs
		for l := 1; l <= st.T; l++ {
			rest += c.Stage(l).UB
		}
		if cost+rest >= best*(1-1e-12) || len(seq) > 5*n {
			return
		}
		for _, op := range ops {
			next := st.Clone()
			if _, dur, err := next.Apply(c, op); err == nil {
				seq = append(seq, op)
				dfs(next, cost+dur)
				seq = seq[:len(seq)-1]
			}
		}
	}
	dfs(verify.InitialState(c), 0)
	return best, sequences, visits <= maxVisits
}

func requireTensorAware(t *testing.T) {
	t.Helper()
	if os.Getenv("MEMSCHED_COMBINED_TENSOR_AWARE") == "" {
		t.Skip("measurement: MEMSCHED_COMBINED_TENSOR_AWARE=1 (scripts/tensor-aware-zoo.sh)")
	}
}

// TestTensorAwareTiny: on 400 random tiny chains (TestSoundness's draw, byte scale) the
// tensor-aware relaxation over every sequence is at most the exact optimum (oracle.Strict),
// and how often it and the link credit meet it.
func TestTensorAwareTiny(t *testing.T) {
	requireTensorAware(t)
	r := rand.New(rand.NewPCG(31, 2000))
	var pts, aware, credit, kept, either, capped int
	for k := 0; k < 400; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		ref, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{})
		require.NoError(t, err)
		if !ref.Feasible {
			continue
		}
		opt, _ := ref.Makespan.Float64()
		name := fmt.Sprintf("chain %d (M = %d, β = %g)\n%s", k, budget, beta, describe(c))
		ta, _, ok := tensorAwareAll(c, budget, beta, opt, 3_000_000)
		if !ok {
			capped++
			continue
		}
		require.LessOrEqual(t, ta, opt*(1+1e-12), "%s: tensor-aware %g above the optimum %g", name, ta, opt)
		lc, err := dp.LinkCredit(c, budget, beta, dp.LinkCreditOptions{Upper: opt, Whole: true})
		require.NoError(t, err, name)
		kb, err := dp.KeptActivations(c, budget, beta, dp.KeptOptions{Upper: opt})
		require.NoError(t, err, name)
		pts++
		at := func(b float64) bool { return b >= opt*(1-1e-9) }
		if at(ta) {
			aware++
		}
		if at(lc.Bound) {
			credit++
		}
		if at(kb.Bound) {
			kept++
		}
		if at(max(ta, lc.Bound)) {
			either++
		}
	}
	t.Logf("%d feasible points: the tensor-aware relaxation over every sequence at the optimum on %d, the link credit on %d (either on %d), the kept-activation bound on %d; %d past the search's cap", pts, aware, credit, either, kept, capped)
}

// zooShaped merges c's stages (the loss stage apart) into groups ending at cuts and rounds
// them to a tiny chain: sizes in units of su (a non-zero size stays ≥ 1), times in units of
// tu; a group's u_f, u_b and ā are its stages' sums, its a and δ its last stage's, its
// overheads the largest.
func zooShaped(c *instances.Chain, cuts []int, su int64, tu float64) *instances.Chain {
	q := func(x int64) int64 {
		if x == 0 {
			return 0
		}
		return max(1, int64(math.Round(float64(x)/float64(su))))
	}
	qt := func(x float64) float64 { return math.Round(x / tu) }
	out := &instances.Chain{Name: c.Name + " (zoo-shaped)", A0: q(c.A0), Delta0: q(c.Delta0)}
	from := 1
	for _, e := range cuts {
		var g instances.Stage
		var abar int64
		for l := from; l <= e; l++ {
			s := c.Stage(l)
			g.UF += s.UF
			g.UB += s.UB
			abar += s.ABar
			g.OF, g.OB = max(g.OF, s.OF), max(g.OB, s.OB)
		}
		last := c.Stage(e)
		g.A, g.Delta = q(last.A), q(last.Delta)
		g.ABar = max(q(abar), g.A)
		g.OF, g.OB = q(g.OF), q(g.OB)
		g.UF, g.UB = qt(g.UF), qt(g.UB)
		out.Stages = append(out.Stages, g)
		from = e + 1
	}
	loss := *c.Stage(c.Len())
	loss.UF, loss.UB = qt(loss.UF), qt(loss.UB)
	loss.A, loss.ABar, loss.Delta, loss.OF, loss.OB = q(loss.A), q(loss.ABar), q(loss.Delta), q(loss.OF), q(loss.OB)
	out.Stages = append(out.Stages, loss)
	return out
}

// TestZooShapedChains: the zoo's networks cut at random into 5 stages and the loss, rounded
// to tiny chains (sizes in 1/40 of the largest ā, times in 1/20 of the largest group's
// forward or backward, β from 12 and 6 GB/s to a quarter unit), at 10/25/50/75 % of the way
// from the least budget to the store-all peak: the exact optimum (oracle.Strict) against the
// lever's best verified schedule (its strategies and the remat optimum), the link credit, the
// kept-activation bound (dp.KeptActivations) and, where neither meets it, the tensor-aware
// relaxation over every sequence. It asserts that no bound is above the optimum and no
// schedule below it, and logs how often each meets it.
func TestZooShapedChains(t *testing.T) {
	requireTensorAware(t)
	nets := []struct {
		name  string
		chain func() (*instances.Chain, error)
	}{
		{"resnet50", func() (*instances.Chain, error) { return zoo.ResNet(zoo.CNNConfig{Depth: 50, Image: 224, Batch: 32}) }},
		{"resnet101", func() (*instances.Chain, error) { return zoo.ResNet(zoo.CNNConfig{Depth: 101, Image: 224, Batch: 32}) }},
		{"inception3", func() (*instances.Chain, error) { return zoo.InceptionV3(zoo.CNNConfig{Image: 299, Batch: 32}) }},
		{"densenet121", func() (*instances.Chain, error) {
			return zoo.DenseNet(zoo.CNNConfig{Depth: 121, Image: 224, Batch: 32})
		}},
		{"vgg19", func() (*instances.Chain, error) { return zoo.VGG(zoo.CNNConfig{Depth: 19, Image: 224, Batch: 32}) }},
		{"gpt2-12", func() (*instances.Chain, error) {
			return zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1024, Batch: 32})
		}},
		{"bert-24", func() (*instances.Chain, error) {
			return zoo.Transformer(zoo.TransformerConfig{Kind: "bert", Hidden: 768, Heads: 12, Layers: 24, SeqLen: 1024, Batch: 32})
		}},
	}
	const draws, groups = 8, 6
	r := rand.New(rand.NewPCG(5, 9))
	for _, net := range nets {
		c, err := net.chain()
		require.NoError(t, err, net.name)
		n := c.Len()
		var maxABar int64
		for l := 1; l < n; l++ {
			maxABar = max(maxABar, c.Stage(l).ABar)
		}
		var pts, credit, kept, either, aware, best, capped, refCapped int
		for d := 0; d < draws; d++ {
			cut := map[int]bool{n - 1: true}
			for _, p := range r.Perm(n - 2)[:groups-2] {
				cut[p+1] = true
			}
			var cuts []int
			var maxU, uf, ub float64
			for l := 1; l <= n-1; l++ {
				uf, ub = uf+c.Stage(l).UF, ub+c.Stage(l).UB
				if cut[l] {
					cuts = append(cuts, l)
					maxU, uf, ub = max(maxU, uf, ub), 0, 0
				}
			}
			cc := zooShaped(c, cuts, max(1, maxABar/40), maxU/20)
			if cc.Validate() != nil {
				continue
			}
			sa, err := verify.Remat(cc, checkpoint.StoreAll(cc), verify.RematOptions{})
			require.NoError(t, err)
			lo := verify.MinBudget(cc)
			for _, pct := range []int64{10, 25, 50, 75} {
				M := lo + (sa.Peak-lo)*pct/100
				for _, gbps := range []float64{12, 6} {
					beta := math.Max(1, math.Round(gbps*1e9*maxU/20/float64(max(1, maxABar/40))*4)/4)
					name := fmt.Sprintf("%s cut at %v, %d %%, %g GB/s (M = %d, β = %g)\n%s", net.name, cuts, pct, gbps, M, beta, describe(cc))
					ref, err := oracle.Strict(cc, M, beta, oracle.StrictOptions{})
					if errors.Is(err, oracle.ErrStrictLimit) {
						refCapped++
						continue
					}
					require.NoError(t, err, name)
					if !ref.Feasible {
						continue
					}
					opt, _ := ref.Makespan.Float64()
					var top *big.Rat
					for _, st := range rematoffload.Strategies {
						out, err := st.Run(cc, M, beta, rematoffload.Options{Exact: true, Slots: 64})
						require.NoError(t, err, "%s %s", name, st.Name)
						if out.Feasible && (top == nil || out.Report.Exact.Cmp(top) < 0) {
							top = out.Report.Exact
						}
					}
					if _, m, ok, err := oracle.Remat(cc, M, verify.RematOptions{}); err == nil && ok {
						if v := new(big.Rat).SetFloat64(m); top == nil || v.Cmp(top) < 0 {
							top = v
						}
					}
					require.NotNil(t, top, "%s: the referee has a schedule, the lever none", name)
					require.GreaterOrEqual(t, top.Cmp(ref.Makespan), 0, "%s: a verified schedule below the optimum", name)
					lc, err := dp.LinkCredit(cc, M, beta, dp.LinkCreditOptions{Upper: opt, Whole: true})
					require.NoError(t, err, name)
					require.LessOrEqual(t, lc.Bound, opt*(1+1e-12), name)
					kb, err := dp.KeptActivations(cc, M, beta, dp.KeptOptions{Upper: opt})
					require.NoError(t, err, name)
					require.LessOrEqual(t, kb.Bound, opt*(1+1e-12), name)
					pts++
					at := func(b float64) bool { return b >= opt*(1-1e-9) }
					if top.Cmp(ref.Makespan) == 0 {
						best++
					}
					if at(kb.Bound) {
						kept++
					}
					if at(lc.Bound) {
						credit++
					}
					if at(max(lc.Bound, kb.Bound)) {
						either++
						continue
					}
					ta, _, ok := tensorAwareAll(cc, M, beta, opt, 10_000_000)
					if !ok {
						capped++
						continue
					}
					require.LessOrEqual(t, ta, opt*(1+1e-12), "%s: tensor-aware %g above the optimum %g", name, ta, opt)
					if at(ta) {
						aware++
					}
				}
			}
		}
		t.Logf("%s: %d points; the lever's best at the optimum on %d; the link credit on %d, the kept-activation bound on %d, either on %d; the tensor-aware relaxation over every sequence on %d of the others (%d past its cap); %d points past the referee's limit",
			net.name, pts, best, credit, kept, either, aware, capped, refCapped)
	}
}

// TestTensorAwareZooPoint (MEMSCHED_TENSOR_AWARE_POINT="chain.json budget GB/s upper-seconds",
// scripts/tensor-aware-zoo.sh): at a zoo point, the link credit's best sequences (one per
// frontier point of its fluid table, at most 30) each get the tensor-aware relaxation below
// upper (the zoo table's best schedule). The point's pofo schedule (10 s) checks the
// relaxation: its own sequence's value is at most its makespan.
func TestTensorAwareZooPoint(t *testing.T) {
	requireTensorAware(t)
	arg := os.Getenv("MEMSCHED_TENSOR_AWARE_POINT")
	if arg == "" {
		t.Skip("MEMSCHED_TENSOR_AWARE_POINT unset")
	}
	var path string
	var M int64
	var gbps, upper float64
	_, err := fmt.Sscanf(arg, "%s %d %g %g", &path, &M, &gbps, &upper)
	require.NoError(t, err, "MEMSCHED_TENSOR_AWARE_POINT=%q: want \"chain.json budget GB/s upper-seconds\"", arg)
	c, err := instances.LoadChain(path)
	require.NoError(t, err)
	beta := gbps * 1e9
	pofo, ok := rematoffload.Lookup("pofo")
	require.True(t, ok)
	out, err := pofo.Run(c, M, beta, rematoffload.Options{Deadline: time.Now().Add(10 * time.Second)})
	if err == nil && out.Feasible && out.Schedule != nil {
		mk, _ := out.Report.Exact.Float64()
		own, err := tensorAware(c, M, beta, out.Schedule.Sequence(), mk*(1+1e-6))
		require.NoError(t, err)
		require.LessOrEqual(t, own, mk*(1+1e-9), "pofo's schedule at %.6f ms, its sequence's tensor-aware value %.6f ms", mk*1e3, own*1e3)
		t.Logf("pofo %.4f ms, its sequence's tensor-aware value %.4f ms", mk*1e3, own*1e3)
	}
	lc, err := dp.LinkCredit(c, M, beta, dp.LinkCreditOptions{Upper: upper, Sequences: 30})
	require.NoError(t, err)
	least := upper
	for _, s := range lc.Sequences {
		v, err := tensorAware(c, M, beta, s.Sequence, upper)
		require.NoError(t, err)
		least = min(least, max(v, s.Relaxed))
		t.Logf("relaxed %.4f ms: tensor-aware %.4f ms", s.Relaxed*1e3, v*1e3)
	}
	t.Logf("RESULT fluid_credit_ms=%.4f sequences=%d least_tensor_aware_ms=%.4f upper_ms=%.4f", lc.Bound*1e3, len(lc.Sequences), least*1e3, upper*1e3)
}
