package dp

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// DefaultKeptNodes caps the search nodes of KeptActivations over all its probes
// (KeptOptions.MaxNodes = 0): ResNet-50 (19 stages) at its zoo points takes under 200 nodes
// from the link credit's bound, ResNet-101 (36 stages) at 25 %, 12 GB/s 36 K from Σu; at
// 10 % 3.2 M (7 s). A node costs a Pareto step and O(n) lookups.
const DefaultKeptNodes = 4 << 20

// MaxKeptStages bounds the chains KeptActivations takes: its search is exponential in the
// stages it must branch on (DenseNet-201, 105 stages, at 10 and 25 %: not within a minute),
// and its lookups and pruning bound cost O(n²) a node.
const MaxKeptStages = 200

// KeptScopeError says that KeptActivations does not take the chain (MaxKeptStages): a scope,
// not a failure; callers say "not run".
type KeptScopeError struct{ Stages int }

func (e *KeptScopeError) Error() string {
	return fmt.Sprintf("dp: kept-activation bound: it takes at most %d stages, the chain has %d", MaxKeptStages, e.Stages)
}

// KeptOptions tune KeptActivations.
type KeptOptions struct {
	// Upper is the makespan of a schedule known to fit (a verified one; required, ≥ 0): the
	// bound is searched below it.
	Upper float64
	// Lower is a lower bound already known (another bound's; 0: Σ(u_f+u_b)): the search
	// starts there and returns it when it proves nothing higher.
	Lower float64
	// MaxNodes caps the search nodes over all probes (0: DefaultKeptNodes); Stop stops it.
	// Either ends the bisection with the bound proven so far (KeptResult.Stopped).
	MaxNodes int
	Stop     <-chan struct{}
	// Hints are sequences of schedules known (or hoped) to be fast, the one behind Upper
	// among them: the stages each keeps from its first forward are checked first at every
	// probe, and the last choice that passed orders the search. They change how soon a
	// probe finds a passing choice, never the bound: a hint that does not pass is passed by.
	Hints []schedule.Sequence
}

// KeptResult is KeptActivations' outcome.
type KeptResult struct {
	// Bound is the lower bound, in seconds: at least Lower and Σ(u_f+u_b), at most Upper.
	Bound float64
	// Probes counts the makespans tried, Nodes the search nodes over all of them.
	Probes, Nodes int
	// Stopped: the node cap or Stop ended a probe; Bound is the last makespan proven
	// infeasible before it (or Lower).
	Stopped bool
	// Gap is the bisection's last bracket (hi − Bound, seconds; 0 when nothing was bracketed).
	Gap float64
}

// KeptActivationsCertificate says what certifies KeptActivations' bound and its scope.
const KeptActivationsCertificate = "kept-activation bound (dp.KeptActivations, docs/bounds.md): every stage whose ā the first forward does not keep to its backward costs one more forward; with the others' ā held whole, every first forward and every backward must fit with whole tensors away, offloaded after they were produced and back before they are read, on one link; exhaustive over which ā are kept (branch and bound); global: bounds every strict schedule of rematerialization and offloading together"

// ErrKeptUpper says that KeptActivations found no makespan up to Upper: Upper is not the
// makespan of a schedule that fits (a bug in the caller, or in the bound).
var ErrKeptUpper = errors.New("dp: the kept-activation bound has no makespan up to the upper bound given: it is not a verified schedule's")

// KeptActivations returns a lower bound on the makespan of every strict schedule of
// rematerialization and activation offloading together (SPEC §6: any 004 sequence, any
// transfers of stored tensors on one half-duplex link of beta bytes per second) of chain c
// under budget bytes. It is tensor-aware where the link credit (LinkCredit) counts bytes: a
// stored ā^j of 294 MiB leaves the GPU whole or not at all.
//
// The argument. Take a schedule of makespan T and call K the stages j ≤ L whose first forward
// is F_all^j: ā^j is then stored from F^j's first end to B^j, the only operation that removes
// it (004 Table 1). Every other stage j ∈ D = {1..L} \ K needs ā^j at B^j, so F_all^j runs
// again: the compute is at least Σu + Σ_{j∈D} u_f^j. Then:
//   - The first run of F^k (k = 1..L+1) holds a^0, δ^{L+1}, ā^j for j ∈ K below k, its input
//     (ā^{k−1}, or at least a^{k−1}), and its output (ā^k if k ∈ K, at least a^k) and overhead.
//     It starts by T − Σ_{j≥k} u_f − Σu_b − Σ_{j∈D, j≥k} u_f^j (every later first forward,
//     every backward and the second runs of the stages of D from k on follow it).
//   - B^ℓ (ℓ = L+1 … 1) holds a^0, δ^ℓ, δ^{ℓ−1}, ā^ℓ, its input (ā^{ℓ−1} or at least a^{ℓ−1}),
//     ā^j for j ∈ K below ℓ, and o_b^ℓ. It starts by T − Σ_{k≤ℓ} u_b and ends after Σu_f +
//     Σ_{k≥ℓ} u_b + Σ_{j∈D, j>ℓ} u_f^j (those second runs precede B^j, so B^ℓ).
//   - What such an operation holds beyond M is away: whole tensors it does not read (a^0 and
//     ā^j, j ∈ K, below its input), each offloaded after it was produced (ā^j no earlier than
//     Σ_{k≤j} u_f^k) and before the operation starts, and prefetched after it ends and before
//     its next reader, B^{j+1} at the latest (by T − Σ_{k≤j+1} u_b), one transfer at a time:
//     at most the most bytes of such tensors a link moves in each window (wholeCap, the
//     Pareto set of subsets in release order), both windows checked apart.
//
// Each condition is a relaxation (what the schedule holds is at least the above; its windows
// at most these), each operation is checked alone, and every condition only gets easier as T
// grows. So a makespan T at which no K passes them all (with Σu + Σ_{j∈D} u_f^j ≤ T) is below
// every schedule's: the bound is the largest such T the bisection proves, from Lower to Upper.
// For each probe T the search over K is a branch and bound in stage order. With stages ≤ d
// decided, a lower bound f on the forwards still to drop (for each later F^k, the fractional
// knapsack of u_f over ā sizes that brings the undecided stages below F^k's room, its room
// taken with every tensor that could be away) prunes on time (Σu + drops so far + f ≤ T), and
// every operation whose memory is then known — F^l for l ≤ d, B^l for l ≤ d + 1 — is checked
// with the drops after it decided so far plus f: a later drop only narrows an earlier
// operation's window, so a choice is cut where it is made. The search tries the choice of
// the last passing probe first (a probe between two others passes with it, or nearly), and
// KeptOptions.Hints before it all.
//
// It fails with ErrKeptUpper when Upper itself does not pass (no schedule can be that fast).
func KeptActivations(c *instances.Chain, budget int64, beta float64, o KeptOptions) (KeptResult, error) {
	if err := c.Validate(); err != nil {
		return KeptResult{}, err
	}
	if !(beta > 0) || math.IsInf(beta, 0) {
		return KeptResult{}, fmt.Errorf("dp: kept-activation bound: bandwidth %g must be positive and finite", beta)
	}
	if !(o.Upper >= 0) || math.IsInf(o.Upper, 0) {
		return KeptResult{}, fmt.Errorf("dp: kept-activation bound: the upper bound %g must be finite and ≥ 0", o.Upper)
	}
	if !(o.Lower >= 0) || math.IsInf(o.Lower, 0) {
		return KeptResult{}, fmt.Errorf("dp: kept-activation bound: the lower bound %g must be finite and ≥ 0", o.Lower)
	}
	if n := c.Len(); n > MaxKeptStages {
		return KeptResult{}, &KeptScopeError{Stages: n}
	}
	k := newKeptSearch(c, budget, beta, o)
	if o.Upper < k.sumU*(1-1e-9) {
		return KeptResult{}, ErrKeptUpper // every schedule computes Σu
	}
	if o.Upper == 0 {
		return KeptResult{}, nil // every operation takes no time: 0 is the bound and the optimum
	}
	lo := max(o.Lower, k.sumU)
	res := KeptResult{Bound: min(lo, o.Upper)}
	if lo >= o.Upper*(1-keptCloseTol) {
		return res, nil // nothing to prove below Upper
	}
	probe := func(T float64) (fits, ok bool) {
		res.Probes++
		fits, ok = k.probe(T)
		res.Nodes = k.nodes
		return fits, ok
	}
	// lo first: where it passes nothing above it is proven, and Upper passes as well (every
	// check only gets easier as T grows), so Upper's own probe is not needed — it is the
	// costliest where the bound is not above lo (a witness is found only deep in the search:
	// ResNet-101 at 10 %, 12 GB/s, 4.5 M nodes).
	if fits, ok := probe(lo); !ok || fits {
		res.Stopped = !ok
		return res, nil // stopped, or nothing above lo
	}
	// Upper must pass (it is a schedule's), and a probe just below it that fails proves
	// Upper's schedule optimal (report's 10⁻⁹).
	if fits, ok := probe(o.Upper * (1 + 1e-12)); !ok {
		res.Stopped = true
		return res, nil
	} else if !fits {
		return res, ErrKeptUpper
	}
	hi := o.Upper
	if t := o.Upper * (1 - keptCloseTol); t > lo {
		fits, ok := probe(t)
		if !ok {
			res.Bound, res.Gap, res.Stopped = lo, hi-lo, true
			return res, nil
		}
		if !fits {
			res.Bound = t
			return res, nil
		}
		hi = t
	}
	for hi-lo > 1e-6*hi {
		mid := lo + (hi-lo)/2
		fits, ok := probe(mid)
		if !ok {
			res.Stopped = true
			break
		}
		if fits {
			hi = mid
		} else {
			lo = mid
		}
	}
	res.Bound, res.Gap = lo, hi-lo
	return res, nil
}

// keptCloseTol is how far below Upper KeptActivations' second probe lies: half of the 10⁻⁹
// by which report calls a verified schedule optimal when it is within it of a bound.
const keptCloseTol = 5e-10

// keptSearch is KeptActivations' branch and bound.
type keptSearch struct {
	c        *instances.Chain
	budget   int64
	beta     float64
	n        int
	sumU     float64
	sub      float64   // Σu_b
	pf, pb   []float64 // Σ_{k≤j} u_f, Σ_{k≤j} u_b (j = 0..n)
	kept     []bool    // stage j's ā kept from its first forward (j = 1..L)
	maxNodes int
	stop     <-chan struct{}
	nodes    int
	halted   bool
	// Per probe: capAll[k] the most bytes any held tensors could have away at F^k's first run
	// (a^0 and every ā^i, i < k−1), for the pruning bound.
	capAll []int64
	// order[k]: stages sorted by u_f/ā (cheapest bytes to drop first), for the pruning bound.
	order []int
	// capF[i], capB[i]: the Pareto sets (wholeCap) of a^0 and the kept ā^j, j ≤ i, in the
	// offload window (released at Σ_{k≤j} u_f) and in the prefetch window (reversed time,
	// released at Σ_{k≤j+1} u_b), for the stages decided on the search's path.
	capF, capB []wholeCap
	// Along the path: fx[l], bx[l] the excesses of F^l and B^l once their stages are
	// decided; dsum[i] = Σ_{j∈D, j≤i} u_f^j.
	fx, bx []int64
	dsum   []float64
	// phase: the stages the last passing probe kept (all, before one passed); the search
	// tries that choice first.
	phase []bool
	// fp, bp: the same over every stage (wholeCapPrefixes), built at the first probe for
	// capAll.
	fp, bp []wholeCap
	// hints: the stages each KeptOptions.Hints sequence keeps from its first forward.
	hints [][]bool
}

// keptBy is the set K of seq, a sequence of n stages: the stages j < n whose first forward is
// F_all^j.
func keptBy(seq schedule.Sequence, n int) []bool {
	kept, seen := make([]bool, n+1), make([]bool, n+1)
	for _, op := range seq {
		if op.Stage < 1 || op.Stage >= n || seen[op.Stage] || op.Kind != schedule.Fall && op.Kind != schedule.Fck && op.Kind != schedule.Fn {
			continue
		}
		seen[op.Stage], kept[op.Stage] = true, op.Kind == schedule.Fall
	}
	return kept
}

// leaf reports whether the choice in k.kept (every stage) passes every check at T.
func (k *keptSearch) leaf(T float64) bool {
	spent := 0.0
	for j := 1; j < k.n; j++ {
		k.decide(j)
		if !k.kept[j] {
			spent += k.c.Stage(j).UF
		}
	}
	return k.sumU+spent <= T*(1+1e-12) && k.complete(T)
}

func newKeptSearch(c *instances.Chain, budget int64, beta float64, o KeptOptions) *keptSearch {
	n := c.Len()
	k := &keptSearch{c: c, budget: budget, beta: beta, n: n, sumU: c.ComputeTime(),
		pf: make([]float64, n+1), pb: make([]float64, n+1), kept: make([]bool, n+1),
		maxNodes: o.MaxNodes, stop: o.Stop, capAll: make([]int64, n+1),
		capF: make([]wholeCap, n+1), capB: make([]wholeCap, n+1),
		fx: make([]int64, n+1), bx: make([]int64, n+1), dsum: make([]float64, n+1), phase: make([]bool, n+1)}
	for j := range k.phase {
		k.phase[j] = true
	}
	for _, seq := range o.Hints {
		k.hints = append(k.hints, keptBy(seq, n))
	}
	a0 := capJob{release: 0, sizes: []int64{c.A0}}
	empty := wholeCap{finish: []float64{0}, bytes: []int64{0}}
	k.capF[0], k.capB[0] = empty.then(a0, beta), empty.then(a0, beta)
	if k.maxNodes <= 0 {
		k.maxNodes = DefaultKeptNodes
	}
	for l := 1; l <= n; l++ {
		k.pf[l] = k.pf[l-1] + c.Stage(l).UF
		k.pb[l] = k.pb[l-1] + c.Stage(l).UB
	}
	k.sub = k.pb[n]
	for i := 1; i < n; i++ {
		k.order = append(k.order, i)
	}
	sort.SliceStable(k.order, func(a, b int) bool {
		sa, sb := c.Stage(k.order[a]), c.Stage(k.order[b])
		return sa.UF*float64(sb.ABar) < sb.UF*float64(sa.ABar)
	})
	return k
}

// abarJob is ā^j as a tensor a link may move: offloaded after F^j's first run, back before
// B^{j+1} (in reversed time, released at Σ_{k≤j+1} u_b).
func (k *keptSearch) abarJob(j int, back bool) capJob {
	if back {
		return capJob{release: k.pb[min(j+1, k.n)], sizes: []int64{k.c.Stage(j).ABar}}
	}
	return capJob{release: k.pf[j], sizes: []int64{k.c.Stage(j).ABar}}
}

// away is the most bytes of a^0 and the kept ā^j (j < below) that can be away during an
// operation that starts by start and ends after end (seconds from the start and from T): the
// Pareto sets of those tensors, capF and capB at below − 1, kept along the search's path.
func (k *keptSearch) away(below int, start, end float64) int64 {
	if below == 0 || start < 0 || end < 0 {
		return 0
	}
	return min(k.capF[below-1].at(start), k.capB[below-1].at(end))
}

// decide records stage j's choice (kept[j]) in the Pareto sets along the path: capF[j] and
// capB[j] extend those at j − 1 by ā^j when it is kept. The sets do not depend on the probe's
// makespan (their releases are compute sums from either end), so a node costs one step (then)
// where rebuilding them cost O(n).
func (k *keptSearch) decide(j int) {
	k.capF[j], k.capB[j] = k.capF[j-1], k.capB[j-1]
	if k.kept[j] {
		k.capF[j], k.capB[j] = k.capF[j].then(k.abarJob(j, false), k.beta), k.capB[j].then(k.abarJob(j, true), k.beta)
	}
}

// inputAt is what stage j holds as an operation's input: ā^j when kept, at least a^j.
func (k *keptSearch) inputAt(j int) int64 {
	if j == 0 {
		return k.c.A0
	}
	if j < k.n && k.kept[j] {
		return k.c.Stage(j).ABar
	}
	return min(k.c.Stage(j).A, k.c.Stage(j).ABar)
}

// forward checks F^l's first run at T, stages ≤ l decided, with dropAfter the second runs of
// stages ≥ l (or a lower bound on them).
func (k *keptSearch) forward(l int, T, dropAfter float64) bool {
	return k.forwardFits(l, k.forwardExcess(l), T, dropAfter)
}

// forwardExcess is what F^l's first run holds beyond M, stages ≤ l decided: δ^{L+1}, o_f^l,
// a^0, the kept ā below its input, its input and its output.
func (k *keptSearch) forwardExcess(l int) int64 {
	c := k.c
	n := k.n
	mem := c.SizeDelta(n) + c.Stage(l).OF
	if l > 1 {
		mem += c.A0 // a^0 besides the input
	}
	for j := 1; j < l-1; j++ {
		if k.kept[j] {
			mem += c.Stage(j).ABar
		}
	}
	mem += k.inputAt(l - 1)
	if l < n && k.kept[l] {
		mem += c.Stage(l).ABar
	} else {
		mem += min(c.Stage(l).A, c.Stage(l).ABar)
	}
	return mem - k.budget
}

// forwardFits: x bytes of F^l's can be away. It starts by T − Σ_{j≥l} u_f − Σu_b − dropAfter
// and the tensors are back after it ends (after Σ_{j≤l} u_f); a smaller dropAfter only
// widens the first window, so a lower bound on it keeps the check a relaxation.
func (k *keptSearch) forwardFits(l int, x int64, T, dropAfter float64) bool {
	if x <= 0 {
		return true
	}
	start := T - (k.pf[k.n] - k.pf[l-1]) - k.sub - dropAfter
	return k.away(l-1, start, T-k.pf[l]) >= x
}

// backward checks B^l at T, stages < l decided, with dropAbove the second runs of stages > l
// (or a lower bound on them).
func (k *keptSearch) backward(l int, T, dropAbove float64) bool {
	return k.backwardFits(l, k.backwardExcess(l), T, dropAbove)
}

// backwardExcess is what B^l holds beyond M, stages < l decided: δ^l, δ^{l−1}, o_b^l, ā^l,
// its input, a^0 and the kept ā below the input.
func (k *keptSearch) backwardExcess(l int) int64 {
	c := k.c
	mem := c.SizeDelta(l) + c.SizeDelta(l-1) + c.Stage(l).OB + c.Stage(l).ABar + k.inputAt(l-1)
	if l > 1 {
		mem += c.A0
	}
	for j := 1; j < l-1; j++ {
		if k.kept[j] {
			mem += c.Stage(j).ABar
		}
	}
	return mem - k.budget
}

// backwardFits: x bytes of B^l's can be away. It starts by T − Σ_{k≤l} u_b and ends after
// Σu_f + Σ_{k≥l} u_b + dropAbove; a smaller dropAbove only widens the second window.
func (k *keptSearch) backwardFits(l int, x int64, T, dropAbove float64) bool {
	if x <= 0 {
		return true
	}
	return k.away(l-1, T-k.pb[l], T-(k.pf[k.n]+(k.sub-k.pb[l-1])+dropAbove)) >= x
}

// onPath checks, with stages ≤ d decided, every first forward F^l (l ≤ d) and backward B^l
// (l ≤ d + 1) at T. Their excesses were fixed when their stages were decided (fx, bx along
// the path); their windows narrow as second runs are decided after them: F^l's by the drops of
// stages ≥ l, B^l's by those of stages > l, each the drops decided so far (dsum) plus fut, a
// lower bound on those still to come (every undecided stage lies above d). So a choice whose
// later drops close an earlier operation's window is cut where it is made, not at the leaves.
func (k *keptSearch) onPath(d int, T, fut float64) bool {
	if d >= 1 {
		k.fx[d] = k.forwardExcess(d)
	}
	if d+1 <= k.n {
		k.bx[d+1] = k.backwardExcess(d + 1)
		// B^{d+1}: stage d+1 is undecided and fut may count it, so only the drops above it
		// decided so far (none).
		if !k.backwardFits(d+1, k.bx[d+1], T, 0) {
			return false
		}
	}
	for l := 1; l <= d; l++ {
		if !k.forwardFits(l, k.fx[l], T, k.dsum[d]-k.dsum[l-1]+fut) || !k.backwardFits(l, k.bx[l], T, k.dsum[d]-k.dsum[l]+fut) {
			return false
		}
	}
	return true
}

// complete checks every operation at T once every stage is decided.
func (k *keptSearch) complete(T float64) bool {
	n := k.n
	drop := make([]float64, n+2) // Σ_{j∈D, j≥l} u_f^j
	for l := n - 1; l >= 1; l-- {
		drop[l] = drop[l+1]
		if !k.kept[l] {
			drop[l] += k.c.Stage(l).UF
		}
	}
	// A full check costs 2n Pareto sets: Stop is read between them.
	for l := 1; l <= n; l++ {
		if k.halted = stopped(k.stop); k.halted || !k.forward(l, T, drop[l]) {
			return false
		}
	}
	for l := n; l >= 1; l-- {
		if k.halted = stopped(k.stop); k.halted || !k.backward(l, T, drop[l+1]) {
			return false
		}
	}
	return true
}

// setCaps fills capAll for probe T: the held tensors below F^k's input, all of them, in each
// window with no second run after it — at least what any choice of kept stages can have away.
func (k *keptSearch) setCaps(T float64) {
	n := k.n
	fj := []capJob{{release: 0, sizes: []int64{k.c.A0}}}
	bj := []capJob{{release: 0, sizes: []int64{k.c.A0}}}
	for j := 1; j <= n-2; j++ {
		fj, bj = append(fj, k.abarJob(j, false)), append(bj, k.abarJob(j, true))
	}
	if k.fp == nil {
		fp, okf := wholeCapPrefixes(fj, k.beta, k.stop)
		bp, okb := wholeCapPrefixes(bj, k.beta, k.stop)
		if !okf || !okb {
			k.halted = true // the probe's answer is discarded; nothing kept half-built
			return
		}
		k.fp, k.bp = fp, bp
	}
	fp, bp := k.fp, k.bp
	for l := 2; l <= n; l++ {
		// Below F^l's input: a^0 and ā^1 … ā^{l−2}, the prefix of l−1 jobs.
		start := T - (k.pf[n] - k.pf[l-1]) - k.sub
		if start < 0 {
			k.capAll[l] = 0
			continue
		}
		k.capAll[l] = min(fp[l-2].at(start), bp[l-2].at(T-k.pf[l]))
	}
}

// toDrop is a lower bound on the u_f still to spend when stages ≤ j are decided: for each
// later first forward F^l, the undecided stages j < i < l−1 kept hold Σ ā^i that must fit in
// its room (M plus capAll[l], less what it holds for sure); the fractional knapsack of u_f
// over ā that brings them down to it. +Inf when no choice fits.
func (k *keptSearch) toDrop(j int) float64 {
	c := k.c
	n := k.n
	var fixed int64 = c.A0 + c.SizeDelta(n)
	for i := 1; i <= j; i++ {
		if k.kept[i] {
			fixed += c.Stage(i).ABar
		}
	}
	lb := 0.0
	for l := j + 2; l <= n; l++ {
		room := k.budget + k.capAll[l] - fixed - min(c.Stage(l-1).A, c.Stage(l-1).ABar) - min(c.Stage(l).A, c.Stage(l).ABar) - c.Stage(l).OF
		var tot int64
		for i := j + 1; i < l-1; i++ {
			tot += c.Stage(i).ABar
		}
		excess := tot - room
		if excess <= 0 {
			continue
		}
		if room < 0 {
			return math.Inf(1)
		}
		need := 0.0
		for _, i := range k.order {
			if excess <= 0 {
				break
			}
			if i <= j || i >= l-1 {
				continue
			}
			s := c.Stage(i)
			if s.ABar <= excess {
				need += s.UF
				excess -= s.ABar
			} else {
				need += s.UF * float64(excess) / float64(s.ABar)
				excess = 0
			}
		}
		lb = max(lb, need)
	}
	return lb
}

// probe reports whether some choice of kept stages passes every check at T (ok = false when
// the node cap or Stop ended the search first).
func (k *keptSearch) probe(T float64) (fits, ok bool) {
	if stopped(k.stop) {
		k.halted = true
		return false, false
	}
	if k.setCaps(T); k.halted {
		return false, false
	}
	for _, h := range k.hints {
		copy(k.kept, h)
		if k.leaf(T) {
			copy(k.phase, k.kept)
			clear(k.kept)
			return true, true
		}
		if k.halted {
			clear(k.kept)
			return false, false
		}
	}
	L := k.n - 1
	var exists func(j int, spent float64) bool
	exists = func(j int, spent float64) bool {
		if k.halted {
			return false
		}
		// Stop is read at every node: one can cost milliseconds (O(n) Pareto sets).
		if k.nodes++; k.nodes > k.maxNodes || stopped(k.stop) {
			k.halted = true
			return false
		}
		if k.sumU+spent > T*(1+1e-12) {
			return false
		}
		fut := k.toDrop(j - 1)
		if k.sumU+spent+fut > T*(1+1e-12) {
			return false
		}
		if !k.onPath(j-1, T, fut) {
			return false
		}
		if j > L {
			return k.complete(T)
		}
		// The last witness's choice first (all kept before the first): a probe below a
		// makespan that passed often passes with the same stages kept, or nearly.
		for _, keep := range [2]bool{k.phase[j], !k.phase[j]} {
			k.kept[j] = keep
			k.decide(j)
			u := 0.0
			if !keep {
				u = k.c.Stage(j).UF
			}
			k.dsum[j] = k.dsum[j-1] + u
			if exists(j+1, spent+u) {
				return true
			}
		}
		return false
	}
	fits = exists(1, 0)
	if fits {
		copy(k.phase, k.kept)
	}
	for j := range k.kept {
		k.kept[j] = false
	}
	return fits, !k.halted
}
