package dp

import (
	"errors"
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
)

// LinkCreditOptions tune LinkCredit.
type LinkCreditOptions struct {
	// Upper is the makespan of a schedule known to fit (a verified one; required, > 0): the
	// bound is searched below it and the table is pruned by it (ExactOptions.Cutoff).
	Upper float64
	// Exact caps the exact table (MaxBreakpoints, MaxTotal, MaxMemory) and stops it (Stop);
	// its Cutoff is Upper.
	Exact ExactOptions
}

// LinkCreditResult is LinkCredit's bound.
type LinkCreditResult struct {
	// Bound is the lower bound on the makespan of every strict schedule of rematerialization
	// and offloading together, in seconds (at most Upper).
	Bound float64
	// Credit[ℓ] is phase ℓ's link credit h_ℓ in seconds (ℓ = 1..L+1): during it at most
	// β·(T − Σu + Credit[ℓ]) bytes can be away from the GPU.
	Credit []float64
	// TopBudget is the table's budget in bytes (phase L+1's at T = Upper).
	TopBudget int64
	// Stats is the exact table's size.
	Stats ExactStats
}

// ErrLinkCreditUpper says that LinkCredit found no makespan up to Upper: Upper is not the
// makespan of a schedule that fits (a bug in the caller, or in the bound).
var ErrLinkCreditUpper = errors.New("dp: the link-credit relaxation has no makespan up to the upper bound given: it is not a verified schedule's")

// LinkCredit returns a lower bound on the makespan of every schedule of rematerialization
// and activation offloading together (SPEC §6, strict timing: any 004 sequence, any
// transfers of stored tensors on one half-duplex link of beta bytes per second) of chain c
// under budget bytes: the link-credit relaxation.
//
// The argument. Take a schedule of makespan T and an operation o of its compute sequence,
// running over [s, e]. 004's memory of o (every stored tensor, wherever it is, + o's outputs
// and overhead) exceeds the GPU's only by the tensors away then (offloaded and released,
// their prefetch not started); each was offloaded whole in [0, s] and must come back whole
// before its next use (every stored tensor is used again) in [e, T], one transfer at a time:
// so 004's memory of o is at most M + β·min(s, T − e). With p and q the compute that must run
// before and after o in every sequence, s ≥ p and T − e ≥ q, so min(s, T − e) ≤ T − max(p, q)
// = (T − Σu) + h(o), h(o) = Σu − max(p, q). In phase ℓ ≤ L (004 Def. 4.2: after B^{ℓ+1}, up to
// B^ℓ) every forward has run and B^{L+1} … B^{ℓ+1}, and B^{ℓ−1} … B^1 are still to run:
// h ≤ min(Σ_{k≤ℓ} u_b^k, Σu_f + Σ_{k≥ℓ} u_b^k); in phase L+1, h ≤ Σu_f + u_b^{L+1}. The
// credit h'_ℓ is the largest of these over phases ℓ and earlier (a running maximum, so that
// the credits never decrease with time). So the compute sequence is a 004 sequence in which
// every operation of phase ℓ fits in M + β·(T − Σu + h'_ℓ), and it takes at most T: with
// F(x) the best such sequence's makespan when phase L+1 has x bytes (and phase ℓ x plus
// β·(h'_ℓ − h'_{L+1})), T ≥ F(M + β·(T − Σu + h'_{L+1})). The bound is the least T ≥ Σu that
// satisfies this — read off the top frontier of one exact C_FL table (FloatingExact) in which
// each phase's states have its extra budget.
//
// F is the optimum over weakly persistent sequences; that it is the optimum over all
// sequences with these budgets is 004 Lemma 4.4 with budgets that never decrease with time
// (its exchanges only delay recomputations to later phases, whose budgets are then no
// smaller): checked against the exhaustive search with phase budgets (oracle.RematPhased)
// and against the exact strict optimum (oracle.Strict) on random tiny chains.
//
// It fails like NewFloatingExact (a *BreakpointError, a *TooLargeError, ErrStopped), and with
// ErrLinkCreditUpper when no makespan up to Upper satisfies the relaxation.
func LinkCredit(c *instances.Chain, budget int64, beta float64, o LinkCreditOptions) (LinkCreditResult, error) {
	if err := c.Validate(); err != nil {
		return LinkCreditResult{}, err
	}
	if !(beta > 0) || math.IsInf(beta, 0) {
		return LinkCreditResult{}, fmt.Errorf("dp: link credit: bandwidth %g must be positive and finite", beta)
	}
	if !(o.Upper > 0) || math.IsInf(o.Upper, 0) {
		return LinkCreditResult{}, fmt.Errorf("dp: link credit: the upper bound %g must be positive and finite", o.Upper)
	}
	n := c.Len()
	h := linkCredits(c)
	res := LinkCreditResult{Credit: h}
	sumU := c.ComputeTime()
	if o.Upper < sumU {
		return res, ErrLinkCreditUpper
	}
	bytesOf := func(x float64) int64 { // clamped to [0, MaxBytes]
		if !(x > 0) {
			return 0
		}
		return int64(min(x, float64(instances.MaxBytes)))
	}
	extra := make([]int64, n+1)
	for l := 1; l <= n; l++ {
		extra[l] = bytesOf(math.Ceil(beta * (h[l] - h[n])))
	}
	top := float64(budget) + beta*(o.Upper-sumU+h[n])
	res.TopBudget = bytesOf(math.Floor(top))
	opt := o.Exact
	opt.Cutoff = o.Upper
	f, err := newFloatingExact(c, res.TopBudget, opt, extra)
	if err != nil {
		return res, err
	}
	res.Stats = f.Stats()
	best := math.Inf(1)
	for _, p := range f.Frontier() {
		// Phase L+1 has at least p.Budget bytes once M + β·(T − Σu + h_{L+1}) ≥ p.Budget.
		t := sumU - h[n] + (float64(p.Budget)-float64(budget))/beta
		best = min(best, max(p.Makespan, t, sumU))
	}
	if best > o.Upper*(1+1e-9) {
		return res, ErrLinkCreditUpper
	}
	res.Bound = min(best, o.Upper)
	return res, nil
}

// linkCredits returns h'_ℓ for ℓ = 1..L+1 (LinkCredit's comment), in seconds.
func linkCredits(c *instances.Chain) []float64 {
	n := c.Len()
	var suf, sub float64
	pre := make([]float64, n+1) // Σ_{k≤ℓ} u_b^k
	for l := 1; l <= n; l++ {
		suf += c.Stage(l).UF
		sub += c.Stage(l).UB
		pre[l] = sub
	}
	h := make([]float64, n+1)
	h[n] = suf + c.Stage(n).UB
	for l := n - 1; l >= 1; l-- {
		h[l] = max(min(pre[l], suf+sub-pre[l-1]), h[l+1])
	}
	return h
}

// LinkCreditCertificate says what certifies LinkCredit's bound and its scope, for the reports
// (certify, remat-offload).
const LinkCreditCertificate = "link-credit relaxation (dp.LinkCredit, docs/bounds.md): during an operation of phase ℓ the bytes above the budget are away, offloaded whole before it and prefetched after it on one link, at most β·(T − Σu + h_ℓ); the fastest 004 sequence under these phase budgets by exact C_FL; global: bounds every strict schedule of rematerialization and offloading together, the other levers' included"
