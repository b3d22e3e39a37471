package dp

import (
	"math"
	"sort"

	"github.com/memsched/memsched/instances"
)

// The recomputation every schedule runs (LinkCredit, issue 31). The link credit grants every
// operation the slack T − Σu on both sides, as if nothing were recomputed. But an ā^j (j < ℓ)
// not stored while B^ℓ runs must be recomputed by an F_all^j after B^ℓ starts, so a schedule
// whose B^ℓ holds the set S computes at least ρ(S) = Σ_{j<ℓ, j∉S} u_f^j after it: the
// operations of phase ℓ (B^ℓ is its last) start at s ≤ T − (what every sequence runs from them
// on, LinkCredit's q) − ρ(S), and their credit falls by ρ(S). S must fit B^ℓ's memory, 004's:
// δ^ℓ, ā^ℓ, δ^{ℓ−1}, o_b^ℓ, a^0 (nothing can recompute it, and B^1 reads it), B^ℓ's input (ā^{ℓ−1},
// or a plain a^{ℓ−1} when ℓ−1 ∉ S) and the ā^j of S — at most M plus what the link keeps away
// during B^ℓ, which falls as ρ(S) grows. So ρ(S) ≥ ρ*, the least fixpoint of
// ρ ↦ Σ_{j<ℓ} u_f^j − V(cap(ρ) − base), V the most u_f a set of ā can carry within a size (a
// 0/1 knapsack, abarKnapsack) and cap B^ℓ's limit as a function of the recomputation; ρ*(T)
// does not grow with T. Likewise the ā^j (ℓ < j ≤ L) the turn, B^{L+1}, does not hold are
// recomputed after it and before phase ℓ (ε_ℓ), so phase ℓ's operations end at least that
// much later. recomputation.at computes both for every ℓ; creditShape turns them into credits.

// abarKnapsack is the Pareto set of (bytes, u_f) over a set of ā^j — for B^ℓ, j < ℓ, its input
// ā^{ℓ−1} counted by what it adds over a plain a^{ℓ−1}: size[i] increasing, value[i] increasing. Past
// maxCapPoints points, adjacent points are merged into the smaller size with the larger
// value, which only overstates what a size can carry (so ρ* stays a lower bound).
type abarKnapsack struct {
	size  []int64
	value []float64
	total float64 // Σ u_f^j over the items
	base  int64   // B^ℓ's memory without the ā^j of S
}

// recomputation holds the knapsacks of every backward: b[ℓ] is B^ℓ's (items ā^j, j < ℓ,
// ā^{ℓ−1} by what it adds over a plain a^{ℓ−1}; base, B^ℓ's memory without them), sfx[ℓ]
// the turn's items j ∈ (ℓ, L] alone (ℓ = 1..L−1; its base unused).
type recomputation struct {
	b, sfx []abarKnapsack
}

func newRecomputation(c *instances.Chain) *recomputation {
	n := c.Len()
	r := &recomputation{b: make([]abarKnapsack, n+1), sfx: make([]abarKnapsack, n+1)}
	plain := abarKnapsack{size: []int64{0}, value: []float64{0}} // items 1..ℓ−2, plain sizes
	for l := 1; l <= n; l++ {
		st := c.Stage(l)
		k := plain.clone()
		// B^ℓ's memory (verify.RematState.Apply): δ^ℓ, everything stored — ā^ℓ, and a^0,
		// which nothing recomputes and B^1 reads — δ^{ℓ−1} and o_b^ℓ.
		k.base = c.SizeDelta(l) + st.ABar + c.SizeDelta(l-1) + st.OB + c.A0
		if l >= 2 {
			// B^ℓ reads a^{ℓ−1} or ā^{ℓ−1}: the lesser is there either way.
			in := c.Stage(l - 1)
			m := min(in.A, in.ABar)
			k.base += m
			k.total += in.UF
			k.add(in.ABar-m, in.UF)
		}
		r.b[l] = k
		if l >= 2 {
			in := c.Stage(l - 1)
			plain.total += in.UF
			plain.add(in.ABar, in.UF)
		}
	}
	// The turn's items from the top down: sfx[ℓ] holds j = ℓ+1..L.
	if n >= 2 {
		last := c.Stage(n - 1)
		top := abarKnapsack{size: []int64{0}, value: []float64{0}}
		top.total = last.UF
		top.add(last.ABar-min(last.A, last.ABar), last.UF)
		r.sfx[n-2] = top
		for l := n - 3; l >= 1; l-- {
			k := r.sfx[l+1].clone()
			st := c.Stage(l + 1)
			k.total += st.UF
			k.add(st.ABar, st.UF)
			r.sfx[l] = k
		}
	}
	return r
}

func (k abarKnapsack) clone() abarKnapsack {
	k.size, k.value = append([]int64(nil), k.size...), append([]float64(nil), k.value...)
	return k
}

// at returns, for a makespan T, lower bounds on the recomputation every schedule of makespan
// T runs after B^ℓ starts (rho[ℓ], ℓ = 1..L+1) and after B^{L+1} but before phase ℓ (eps[ℓ],
// ℓ = 1..L; 0 at L+1). After B^ℓ: the ā^j, j < ℓ, B^ℓ does not hold (B^ℓ's knapsack, to its
// fixpoint), and whatever runs after a later backward B^{ℓ'}, ℓ' < ℓ, does too (a running
// maximum, from ℓ = 1 up). Before phase ℓ: the ā^j, ℓ < j ≤ L, the turn does not hold. After
// B^{L+1}: also each ℓ's two, which are disjoint. away(ℓ, ρ, ε) is what the link can keep
// away during B^ℓ when the recomputation after it starts is ρ and before its phase ε (bytes,
// non-increasing in both; negative when no schedule). ok is false when some B^ℓ fits no set
// at all: no schedule of makespan T.
func (r *recomputation) at(budget int64, away func(l int, rho, eps float64) int64) (rho, eps []float64, ok bool) {
	n := len(r.b) - 1
	rho, eps = make([]float64, n+1), make([]float64, n+1)
	rho[n] = r.b[n].fixpoint(func(x float64) int64 { return satAdd(budget, away(n, x, 0)) })
	if math.IsInf(rho[n], 1) {
		return rho, eps, false
	}
	room := satAdd(budget, away(n, rho[n], 0)) - r.b[n].base
	for l := 1; l <= n-2; l++ {
		k := r.sfx[l]
		eps[l] = max(0, (k.total-k.carry(room))-1e-12*k.total)
	}
	prev := 0.0 // what runs after B^{ℓ−1} starts
	for l := 1; l < n; l++ {
		own := r.b[l].fixpoint(func(x float64) int64 { return satAdd(budget, away(l, max(x, prev), eps[l])) })
		if math.IsInf(own, 1) {
			return rho, eps, false
		}
		rho[l] = max(own, prev)
		prev = rho[l]
		rho[n] = max(rho[n], rho[l]+eps[l])
	}
	return rho, eps, true
}

// satAdd is a + b clamped to ±MaxBytes.
func satAdd(a, b int64) int64 {
	if x := float64(a) + float64(b); math.Abs(x) >= float64(instances.MaxBytes) {
		return clampBytes(x)
	}
	return a + b
}

// awayBytes is ⌊β·t⌋ in bytes, clamped to ±MaxBytes (t may be negative: no schedule).
func awayBytes(beta, t float64) int64 { return clampBytes(math.Floor(beta * t)) }

// ceilBytes is ⌈β·t⌉ in bytes, clamped to ±MaxBytes.
func ceilBytes(beta, t float64) int64 { return clampBytes(math.Ceil(beta * t)) }

// clampBytes is x as bytes, clamped to ±MaxBytes.
func clampBytes(x float64) int64 {
	return int64(max(-float64(instances.MaxBytes), min(x, float64(instances.MaxBytes))))
}

// add extends the set with one item of w bytes and value v: the set and the set shifted by
// the item are both sorted by size, so one merge keeps the Pareto points (at equal sizes
// the larger value first, then every point that carries no more than the one before it
// dropped).
func (k *abarKnapsack) add(w int64, v float64) {
	if v <= 0 {
		return // no recomputation to save
	}
	size := make([]int64, 0, 2*len(k.size))
	value := make([]float64, 0, 2*len(k.size))
	keep := func(s int64, x float64) {
		if len(value) > 0 && x <= value[len(value)-1] {
			return // dominated: no more value for at least as many bytes
		}
		size, value = append(size, s), append(value, x)
	}
	i, j, n := 0, 0, len(k.size)
	for i < n || j < n {
		sj := k.size[min(j, n-1)] + w
		if j < n && (sj < k.size[j] || sj > instances.MaxBytes) {
			j = n // past MaxBytes (or wrapped): no larger set counts
			continue
		}
		if j >= n || i < n && (k.size[i] < sj || k.size[i] == sj && k.value[i] >= k.value[j]+v) {
			keep(k.size[i], k.value[i])
			i++
		} else {
			keep(sj, k.value[j]+v)
			j++
		}
	}
	k.size, k.value = capPoints(size, value)
}

// carry is the most u_f a set of ā of at most room bytes (beyond base) can hold; −1 when even
// the empty set does not fit.
func (k abarKnapsack) carry(room int64) float64 {
	if room < 0 {
		return -1
	}
	i := sort.Search(len(k.size), func(i int) bool { return k.size[i] > room })
	return k.value[i-1]
}

// fixpoint returns ρ*: the least ρ ≥ 0 with ρ ≥ total − carry(cap(ρ) − base), where cap(ρ)
// is the backward's memory limit (bytes, non-increasing in ρ) when ρ is computed after it;
// +Inf when that backward cannot run at all.
func (k abarKnapsack) fixpoint(cap func(rho float64) int64) float64 {
	rho := 0.0
	for range 256 {
		v := k.carry(cap(rho) - k.base)
		if v < 0 {
			return math.Inf(1)
		}
		// Below the exact difference by a few ulps of the sum: a floating-point excess
		// would overstate the recomputation.
		next := max(0, (k.total-v)-1e-12*k.total)
		if next <= rho {
			return rho
		}
		rho = next
	}
	return rho // each step is a lower bound already
}

// creditShape is what the link credit's reduced credits are computed from: the chain's
// prefix sums of compute and its recomputation knapsacks.
type creditShape struct {
	n              int
	sumU, suf, sub float64
	ubn            float64        // u_b^{L+1}
	pf, pb         []float64      // Σ_{k≤j} u_f^k, Σ_{k≤j} u_b^k (j = 0..n)
	rec            *recomputation // nil without the recomputation (LinkCreditOptions.NoRecompute)
}

// newCreditShape returns c's prefix sums, and its knapsacks (rec) when withRec.
func newCreditShape(c *instances.Chain, withRec bool) *creditShape {
	n := c.Len()
	s := &creditShape{n: n, sumU: c.ComputeTime(), pf: make([]float64, n+1), pb: make([]float64, n+1)}
	if withRec {
		s.rec = newRecomputation(c)
	}
	for l := 1; l <= n; l++ {
		s.suf += c.Stage(l).UF
		s.sub += c.Stage(l).UB
		s.pf[l], s.pb[l] = s.suf, s.sub
	}
	s.ubn = c.Stage(n).UB
	return s
}

// fluidAway is what the link can keep away during B^ℓ at makespan T (bytes, rounded down):
// β·min(s, T − e) with s ≤ T − Σ_{k≤ℓ} u_b − ρ (B^ℓ and everything after it, the
// recomputation after it included) and T − e ≤ T − Σu_f − Σ_{k≥ℓ} u_b − ε (everything before
// it and itself, the recomputation before phase ℓ included); for B^{L+1}, s ≤ T − Σu_b − ρ and
// T − e ≤ T − Σu_f − u_b^{L+1}.
//
// The times get 10⁻¹² T more: at T = Σu they are 0 up to the float sums' rounding, and a
// byte below 0 left B^1 no room where its memory was the budget exactly (TestSoundness, a
// 2-stage chain at GiB scale with real durations).
func (s *creditShape) fluidAway(beta, T float64) func(l int, rho, eps float64) int64 {
	slack := 1e-12 * T
	return func(l int, rho, eps float64) int64 {
		if l == s.n {
			return awayBytes(beta, min(T-s.sub-rho, T-s.suf-s.ubn)+slack)
		}
		return awayBytes(beta, min(T-s.pb[l]-rho, T-s.suf-(s.sub-s.pb[l-1])-eps)+slack)
	}
}

// enough says whether T leaves room for the recomputation at: every schedule computes
// Σu, the recomputation after B^ℓ starts and the one before phase ℓ, which are disjoint.
func (s *creditShape) enough(T float64, rho, eps []float64) bool {
	for l := 1; l <= s.n; l++ {
		if T*(1+1e-12) < s.sumU+rho[l]+eps[l] { // within the float sums' rounding
			return false
		}
	}
	return true
}

// credits returns the credits (seconds beyond T − Σu, as LinkCreditResult.Credit and First)
// with the recomputation at: an operation of phase ℓ ≤ L starts by T − Σ_{k≤ℓ} u_b − ρ_ℓ
// and ends after Σu_f + Σ_{k>ℓ} u_b + ε_ℓ; the first run of F^k by T − Σ_{j≥k} u_f − Σu_b −
// ρ_{L+1} and after Σ_{j≤k} u_f; B^{L+1} (and forwards run again before it) by T − Σu_b −
// ρ_{L+1}. Each is raised to the largest before it in time, as LinkCredit's.
func (s *creditShape) credits(rho, eps []float64) (phase, first []float64) {
	n := s.n
	phase, first = make([]float64, n+1), make([]float64, n+1)
	run := math.Inf(-1)
	for k := 1; k <= n; k++ {
		run = max(run, min(s.pf[k-1]-rho[n], s.sumU-s.pf[k]))
		first[k] = run
	}
	run = max(run, s.suf-rho[n])
	phase[n] = run
	for l := n - 1; l >= 1; l-- {
		run = max(run, min(s.pb[l]-eps[l], s.sumU-s.pb[l]-rho[l]))
		phase[l] = run
	}
	return phase, first
}

// backCredits returns B^ℓ's own credit (seconds beyond T − Σu), not raised to a running
// maximum: B^ℓ starts by T − Σ_{k≤ℓ} u_b − ρ_ℓ and ends after Σu_f + Σ_{k≥ℓ} u_b + ε_ℓ
// (B^{L+1}: by T − Σu_b − ρ_{L+1}, after Σu_f + u_b^{L+1}).
func (s *creditShape) backCredits(rho, eps []float64) []float64 {
	n := s.n
	back := make([]float64, n+1)
	back[n] = min(s.sub-s.ubn, s.suf-rho[n])
	for l := n - 1; l >= 1; l-- {
		back[l] = min(s.pb[l-1]-eps[l], s.sumU-s.pb[l]-rho[l])
	}
	return back
}
