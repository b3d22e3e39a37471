package actmilp

import (
	"fmt"
	"math"

	heur "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/timed"
)

// Retime turns the discrete decisions of a point of the model — the offloaded candidates, the
// link order, and where each release and prefetch falls among the tight operations — into the
// earliest schedule that makes them (longest paths over the difference constraints the
// decisions leave: every row of the model is then satisfied, the memory rows by the binaries
// alone), validated by verify/timed. Times come from the problem's data, not from the solver's
// floating-point values, so a point feasible within the solver's tolerances still gives an
// exact schedule. Its makespan is at most the point's objective (up to that tolerance).
func (f *Formulation) Retime(x []float64) (*heur.Result, error) {
	p := f.Problem
	n := f.n
	uSec := func(k int) float64 {
		if k < n {
			return p.UF[k]
		}
		return p.UB[2*n-1-k]
	}
	dur := func(c int) float64 { return float64(p.X[f.J[c]]) / p.Beta }
	// Nodes: 0..2n−1 operation starts, then 2n+2c the offload and 2n+2c+1 the prefetch of c.
	nodes := 2*n + 2*len(f.J)
	type edge struct {
		from, to int
		w        float64
	}
	var edges []edge
	ge := func(to, from int, w float64) { edges = append(edges, edge{from, to, w}) }
	for k := 0; k+1 < 2*n; k++ {
		ge(k+1, k, uSec(k))
	}
	on := func(v int) bool { return x[v] > 0.5 }
	for c, j := range f.J {
		if !on(int(f.O[c])) {
			continue
		}
		a, b := 2*n+2*c, 2*n+2*c+1
		if j > 0 {
			ge(a, f.pos(j-1, false), uSec(f.pos(j-1, false)))
		}
		ge(b, a, dur(c))
		ge(b, f.pos(j, false), uSec(f.pos(j, false)))
		ge(f.pos(j, true), b, dur(c))
		for _, k := range f.kpos[c] {
			if on(int(f.rel[[2]int{c, k}])) {
				ge(k, a, dur(c))
			}
			if on(int(f.pre[[2]int{c, k}])) {
				ge(k, b, 0)
			} else {
				ge(b, k, 0)
			}
			if q := f.qre[[2]int{c, k}]; q != f.pre[[2]int{c, k}] {
				if on(int(q)) {
					ge(k, b, -uSec(k))
				} else {
					ge(b, k, uSec(k))
				}
			}
		}
	}
	order := f.order(x)
	for i := 0; i+1 < len(order); i++ {
		ge(2*n+order[i+1], 2*n+order[i], dur(order[i]/2))
	}
	// Longest paths from 0 (every start ≥ 0) by Bellman–Ford: at most `nodes` rounds; a change
	// in the last one is a positive cycle — decisions that no times can make.
	t := make([]float64, nodes)
	for round := 0; ; round++ {
		changed := false
		for _, e := range edges {
			if v := t[e.from] + e.w; v > t[e.to] {
				// A relative slack keeps rounding from cycling on zero-weight cycles.
				if v > t[e.to]+1e-15*math.Max(1, math.Abs(v)) {
					changed = true
				}
				t[e.to] = v
			}
		}
		if !changed {
			break
		}
		if round > nodes+1 {
			return nil, fmt.Errorf("actmilp: the incumbent's decisions admit no times (a positive cycle): solver tolerance")
		}
	}
	s := &schedule.Timed{}
	for k := 0; k < 2*n; k++ {
		i, bw := k, false
		if k >= n {
			i, bw = 2*n-1-k, true
		}
		s.Ops = append(s.Ops, schedule.TimedOp{Backward: bw, Index: i, Start: t[k]})
	}
	var moved []int
	for _, tr := range order {
		c := tr / 2
		kind := schedule.Offload
		if tr%2 == 1 {
			kind = schedule.Prefetch
		} else {
			moved = append(moved, f.J[c])
		}
		s.Transfers = append(s.Transfers, schedule.ActTransfer{Kind: kind, Index: f.J[c], Start: t[2*n+tr]})
	}
	rep, err := timed.Check(p, s)
	if err != nil {
		return nil, fmt.Errorf("actmilp: the re-timed incumbent fails validation: %w", err)
	}
	sortInts(moved)
	return &heur.Result{Feasible: true, Schedule: s, Report: rep, Offloaded: moved}, nil
}

// Order returns the link sequence of point x (start times left 0), e.g. for the no-wait
// scheduler.
func (f *Formulation) Order(x []float64) []schedule.ActTransfer {
	var out []schedule.ActTransfer
	for _, tr := range f.order(x) {
		kind := schedule.Offload
		if tr%2 == 1 {
			kind = schedule.Prefetch
		}
		out = append(out, schedule.ActTransfer{Kind: kind, Index: f.J[tr/2]})
	}
	return out
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j-1] > a[j]; j-- {
			a[j-1], a[j] = a[j], a[j-1]
		}
	}
}
