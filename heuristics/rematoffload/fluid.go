package rematoffload

import (
	"math"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// fluid evaluates plans in the fluid model of SPEC §6 in float64, for the strategies' searches
// (many evaluations); verify/combined.Fluid, exact, judges what they return.
type fluid struct {
	c      *instances.Chain
	budget int64
	beta   float64
	state  verify.RematState
}

// fluidResult is a plan's fluid makespan, or how far it is from fitting.
type fluidResult struct {
	ok       bool
	makespan float64
	// short is the largest excess, in bytes, that the link could not absorb (when !ok).
	short float64
	// idle is the idle attributed to each level (its forward steps and its backward part),
	// outermost first, the loss stage last.
	idle []float64
}

func newFluid(c *instances.Chain, budget int64, beta float64) *fluid {
	return &fluid{c: c, budget: budget, beta: beta}
}

// eval runs the plan; an invalid plan is not ok with short = +Inf.
func (f *fluid) eval(p *schedule.CombinedPlan) fluidResult {
	c := f.c
	n := c.Len()
	ops := p.Ops(n)
	lv := levelsOf(c, p)
	f.state = verify.InitialState(c)
	mem := make([]float64, len(ops))
	dur := make([]float64, len(ops))
	compute := 0.0
	for i, op := range ops {
		m, d, err := f.state.Apply(c, op)
		if err != nil {
			return fluidResult{short: math.Inf(1)}
		}
		mem[i], dur[i] = float64(m), d
		compute += d
	}
	res := fluidResult{ok: true, idle: make([]float64, len(lv))}
	M := float64(f.budget)
	// fit checks mem + x against the budget: an excess moves while the compute stream idles.
	fit := func(k int, m float64, x *float64) {
		ex := m + *x - M
		if ex <= 0 {
			return
		}
		if ex > *x+1e-6 {
			res.ok = false
			res.short = math.Max(res.short, ex-*x)
			return
		}
		ex = math.Min(ex, *x)
		res.idle[k] += ex / f.beta
		*x -= ex
	}
	x, away := 0.0, 0.0
	for k, l := range lv {
		for j, i := range l.fwd {
			m := mem[i] - away
			if l.off && j > 0 {
				m -= float64(l.size)
			}
			fit(k, m, &x)
			if l.off && j == 0 {
				x += float64(l.size)
			}
			x = math.Max(0, x-f.beta*dur[i])
		}
		if l.off {
			away += float64(l.size)
		}
	}
	res.idle[len(lv)-1] += x / f.beta
	x, away = 0, 0
	for k, l := range lv {
		for j := len(l.bwd) - 1; j >= 0; j-- {
			i := l.bwd[j]
			fit(k, mem[i]-away, &x)
			x = math.Max(0, x-f.beta*dur[i])
		}
		if l.off {
			x += float64(l.size)
			away += float64(l.size)
		}
	}
	res.idle[len(lv)-1] += x / f.beta
	res.makespan = compute
	for _, v := range res.idle {
		res.makespan += v
	}
	return res
}

// level is one nesting level of a plan: a top-level segment or, last, the loss stage.
type level struct {
	x        schedule.Tensor
	size     int64
	off      bool
	fwd, bwd []int // indices into the plan's compute stream
}

// levelsOf lays out the plan's levels on its compute stream (CombinedPlan.Ops).
func levelsOf(c *instances.Chain, p *schedule.CombinedPlan) []level {
	K := len(p.Segments)
	lv := make([]level, K+1)
	var prev *schedule.CombinedSegment
	i := 0
	for k := range p.Segments {
		g := &p.Segments[k]
		t := g.Input(prev)
		lv[k] = level{x: t, size: tensorSize(c, t), off: g.Offload}
		for range g.Forward() {
			lv[k].fwd = append(lv[k].fwd, i)
			i++
		}
		prev = g
	}
	t := p.LossInput()
	lv[K] = level{x: t, size: tensorSize(c, t), off: p.OffloadLoss, fwd: []int{i}, bwd: []int{i + 1}}
	i += 2
	for k := K - 1; k >= 0; k-- {
		for range p.Segments[k].BackwardOps() {
			lv[k].bwd = append(lv[k].bwd, i)
			i++
		}
	}
	return lv
}

func tensorSize(c *instances.Chain, t schedule.Tensor) int64 {
	if t.Full && t.Stage > 0 {
		return c.Stage(t.Stage).ABar
	}
	return c.SizeA(t.Stage)
}
