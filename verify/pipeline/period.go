package pipeline

import (
	"fmt"
	"math/big"

	pl "github.com/memsched/memsched/instances/pipeline"
)

// edge is a constraint of an event graph between two events of micro-batches μ and μ+h:
// t(to, μ+h) ≥ t(from, μ) + w.
type edge struct {
	from, to int
	w        *big.Rat
	h        int
}

// period returns the steady-state time per micro-batch of a contiguous plan under the
// problem's named schedule, as a float64 and as an exact fraction of the float64 inputs.
//
// 1F1B: the order of GPU k for m → ∞ is periodic (B_k(μ), then F_k(μ+w), w = S−k), so the
// event graph of the micro-batches is one graph with heights (micro-batch offsets) and the
// period is its maximum cycle mean max_C Σw/Σh: e.g. f_k + b_k on GPU k, the link's transfer
// time, and the round trip Σ_{j≥k}(f_j + b_j + transfers) over w_k = S−k micro-batches.
// GPipe runs all forwards, then all backwards: its period is the forward graph's maximum cycle
// mean plus the backward graph's (the makespan is m·(λ_F + λ_B) + O(1)).
func period(p *pl.Problem, prof []*profile) (float64, string, error) {
	S := len(prof)
	rat := func(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }
	// Nodes: F_k = k, B_k = S+k, Ta_k = 2S+k (a^{e_k} on the forward link), Td_k = 3S+k.
	fN, bN, taN, tdN := func(k int) int { return k }, func(k int) int { return S + k },
		func(k int) int { return 2*S + k }, func(k int) int { return 3*S + k }
	n := 4 * S
	var fwd, bwd []edge
	for k := 0; k < S; k++ {
		f, b := rat(prof[k].f), rat(prof[k].b)
		if k+1 < S {
			cf, cb := p.CutTimes(prof[k].last)
			fwd = append(fwd, edge{fN(k), taN(k), f, 0}, edge{taN(k), fN(k + 1), rat(cf), 0}, edge{taN(k), taN(k), rat(cf), 1})
			bwd = append(bwd, edge{bN(k + 1), tdN(k), rat(prof[k+1].b), 0}, edge{tdN(k), bN(k), rat(cb), 0}, edge{tdN(k), tdN(k), rat(cb), 1})
		}
		if p.Schedule == pl.GPipe {
			fwd = append(fwd, edge{fN(k), fN(k), f, 1})
			bwd = append(bwd, edge{bN(k), bN(k), b, 1})
		}
	}
	if p.Schedule == pl.GPipe {
		lf, err := maxCycleMean(n, fwd)
		if err != nil {
			return 0, "", err
		}
		lb, err := maxCycleMean(n, bwd)
		if err != nil {
			return 0, "", err
		}
		sum := new(big.Rat).Add(lf, lb)
		v, _ := sum.Float64()
		return v, sum.RatString(), nil
	}
	es := append(fwd, bwd...)
	for k := 0; k < S; k++ {
		w := S - k
		es = append(es, edge{fN(k), bN(k), rat(prof[k].f), 1 - w}, edge{bN(k), fN(k), rat(prof[k].b), w})
	}
	lam, err := maxCycleMean(n, es)
	if err != nil {
		return 0, "", err
	}
	v, _ := lam.Float64()
	return v, lam.RatString(), nil
}

// maxCycleMean returns max over the cycles C of the graph of Σ_C w / Σ_C h (0 without a
// cycle), in exact rationals, by cycle improvement: with λ the best ratio so far, a
// Bellman–Ford longest-path pass on the weights w − λh finds a cycle of positive reduced
// weight, whose ratio is above λ, until none is left (Dantzig, Blattner and Rao 1967; the
// ratios strictly increase over finitely many cycles). The passes run in float64 first and
// the last ones, from the best cycle the floats found, in exact rationals, so that the answer
// is exact whatever the rounding. A cycle of positive weight and height ≤ 0 is a deadlock of
// the order: an error.
func maxCycleMean(n int, es []edge) (*big.Rat, error) {
	wf := make([]float64, len(es))
	for i, e := range es {
		wf[i], _ = e.w.Float64()
	}
	lam := new(big.Rat)
	lf := 0.0
	dist := make([]float64, n)
	pred := make([]int, n)
	for range 10000 {
		cyc := positiveCycle(n, es, pred, func(i int) float64 { return wf[i] - lf*float64(es[i].h) }, dist)
		if cyc == nil {
			break
		}
		sw, sh := new(big.Rat), 0
		for _, i := range cyc {
			sw.Add(sw, es[i].w)
			sh += es[i].h
		}
		if sh <= 0 {
			break // let the exact passes decide
		}
		r := new(big.Rat).Quo(sw, new(big.Rat).SetInt64(int64(sh)))
		if r.Cmp(lam) <= 0 {
			break // rounding: the floats cannot tell more
		}
		lam = r
		lf, _ = lam.Float64()
	}
	return exactCycleMean(n, es, lam)
}

// positiveCycle runs Bellman–Ford for longest paths from a virtual source joined to every node
// with the reduced weights red and returns the edges of a cycle of positive reduced weight
// (nil when there is none).
func positiveCycle(n int, es []edge, pred []int, red func(i int) float64, dist []float64) []int {
	for v := range dist {
		dist[v], pred[v] = 0, -1
	}
	last := -1
	for pass := 0; pass < n; pass++ {
		last = -1
		for i, e := range es {
			if d := dist[e.from] + red(i); d > dist[e.to] {
				dist[e.to], pred[e.to], last = d, i, e.to
			}
		}
		if last < 0 {
			return nil
		}
	}
	return cycleFrom(n, es, pred, last)
}

// cycleFrom walks the predecessor edges back from v n times, to land on a cycle, and returns
// the cycle's edges.
func cycleFrom(n int, es []edge, pred []int, v int) []int {
	for range n {
		v = es[pred[v]].from
	}
	var cyc []int
	u := v
	for {
		i := pred[u]
		cyc = append(cyc, i)
		u = es[i].from
		if u == v {
			return cyc
		}
	}
}

// exactCycleMean is the cycle improvement in exact rationals, from a ratio lam that some cycle
// reaches (or 0).
func exactCycleMean(n int, es []edge, lam *big.Rat) (*big.Rat, error) {
	dist := make([]*big.Rat, n)
	pred := make([]int, n)
	red := make([]*big.Rat, len(es))
	tmp := new(big.Rat)
	for iter := 0; ; iter++ {
		if iter > 10000 {
			panic("pipeline: maxCycleMean does not converge")
		}
		for i, e := range es {
			red[i] = new(big.Rat).Sub(e.w, tmp.SetInt64(int64(e.h)).Mul(tmp, lam))
		}
		for v := range dist {
			dist[v] = new(big.Rat)
			pred[v] = -1
		}
		last := -1
		for pass := 0; pass < n; pass++ {
			last = -1
			for i, e := range es {
				if tmp.Add(dist[e.from], red[i]).Cmp(dist[e.to]) > 0 {
					dist[e.to].Set(tmp)
					pred[e.to] = i
					last = e.to
				}
			}
			if last < 0 {
				break
			}
		}
		if last < 0 {
			return lam, nil
		}
		sw, sh := new(big.Rat), 0
		for _, i := range cycleFrom(n, es, pred, last) {
			sw.Add(sw, es[i].w)
			sh += es[i].h
		}
		if sh <= 0 {
			f, _ := sw.Float64()
			return nil, planErrorf("deadlock: the order has a cycle of weight %g within one micro-batch (height %d)", f, sh)
		}
		next := new(big.Rat).Quo(sw, new(big.Rat).SetInt64(int64(sh)))
		if next.Cmp(lam) <= 0 {
			panic(fmt.Sprintf("pipeline: maxCycleMean: cycle ratio %s not above %s", next.RatString(), lam.RatString()))
		}
		lam = next
	}
}
