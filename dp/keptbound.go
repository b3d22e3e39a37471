package dp

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/memsched/memsched/instances"
)

// DefaultKeptNodes caps the search nodes of KeptActivations over all its probes
// (KeptOptions.MaxNodes = 0): ResNet-50 (19 stages) at its zoo points takes 0.5–10 K a probe,
// ResNet-101 (36 stages) at 25 % about 200 K, at 10 % more than a minute's worth.
const DefaultKeptNodes = 4 << 20

// MaxKeptStages bounds the chains KeptActivations takes: its search rarely ends past a few
// dozen stages (ResNet-101, 36 stages, at 10 %: not within a minute), and every node costs
// O(n) Pareto sets of up to 4096 points, so that on a 2001-stage chain one node took seconds.
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
// For each probe T the search over K is a branch and bound in stage order: each F^k is checked
// as soon as stages < k+1 are decided (with the second runs decided so far), and a lower
// bound on the forwards still to drop (for each later F^k, the fractional knapsack of u_f over
// ā sizes that brings the undecided stages below F^k's room, its room taken with every
// tensor that could be away) prunes the rest.
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
	// The top first: Upper itself must pass (it is a schedule's), and a probe just below it
	// that fails proves Upper's schedule optimal (report's 10⁻⁹).
	if fits, ok := probe(o.Upper * (1 + 1e-12)); !ok {
		res.Stopped = true
		return res, nil
	} else if !fits {
		return res, ErrKeptUpper
	}
	if fits, ok := probe(lo); !ok || fits {
		res.Stopped = !ok
		return res, nil // stopped, or nothing above lo
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
}

func newKeptSearch(c *instances.Chain, budget int64, beta float64, o KeptOptions) *keptSearch {
	n := c.Len()
	k := &keptSearch{c: c, budget: budget, beta: beta, n: n, sumU: c.ComputeTime(),
		pf: make([]float64, n+1), pb: make([]float64, n+1), kept: make([]bool, n+1),
		maxNodes: o.MaxNodes, stop: o.Stop, capAll: make([]int64, n+1)}
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
// operation that starts by start and ends after end (seconds from the start and from T).
func (k *keptSearch) away(below int, start, end float64) int64 {
	var fj, bj []capJob
	if below > 0 {
		fj = append(fj, capJob{release: 0, sizes: []int64{k.c.A0}})
		bj = append(bj, capJob{release: 0, sizes: []int64{k.c.A0}})
	}
	for j := 1; j < below; j++ {
		if k.kept[j] {
			fj, bj = append(fj, k.abarJob(j, false)), append(bj, k.abarJob(j, true))
		}
	}
	if start < 0 || end < 0 {
		return 0
	}
	return min(k.capOf(fj).at(start), k.capOf(bj).at(end))
}

// capOf is newWholeCap of jobs already in release order, built job by job with Stop read
// between them: on DenseNet-201 one set over ~100 held tensors took a large part of a second,
// and the search returned up to 0.9 s after its Stop. Stopped, it marks the search halted
// (the probe's answer is then discarded) and returns what it has.
func (k *keptSearch) capOf(jobs []capJob) wholeCap {
	w := wholeCap{finish: []float64{0}, bytes: []int64{0}}
	for _, j := range jobs {
		if k.halted = k.halted || stopped(k.stop); k.halted {
			break
		}
		w = w.then(j, k.beta)
	}
	return w
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
// stages ≥ l known so far.
func (k *keptSearch) forward(l int, T, dropAfter float64) bool {
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
	x := mem - k.budget
	if x <= 0 {
		return true
	}
	start := T - (k.pf[n] - k.pf[l-1]) - k.sub - dropAfter
	return k.away(l-1, start, T-k.pf[l]) >= x
}

// backward checks B^l at T, every stage decided, with dropAbove the second runs of stages > l.
func (k *keptSearch) backward(l int, T, dropAbove float64) bool {
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
	x := mem - k.budget
	if x <= 0 {
		return true
	}
	return k.away(l-1, T-k.pb[l], T-(k.pf[k.n]+(k.sub-k.pb[l-1])+dropAbove)) >= x
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
	fp, bp := k.capPrefixes(fj), k.capPrefixes(bj)
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

// capPrefixes is wholeCapPrefixes of jobs in release order with Stop read between jobs (as
// capOf); stopped, the sets not built are empty and the search is halted.
func (k *keptSearch) capPrefixes(jobs []capJob) []wholeCap {
	out := make([]wholeCap, len(jobs))
	w := wholeCap{finish: []float64{0}, bytes: []int64{0}}
	for i, j := range jobs {
		if k.halted = k.halted || stopped(k.stop); !k.halted {
			w = w.then(j, k.beta)
		}
		out[i] = w
	}
	return out
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
	k.setCaps(T)
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
		if j > L {
			return k.complete(T)
		}
		if k.sumU+spent+k.toDrop(j-1) > T*(1+1e-12) {
			return false
		}
		k.kept[j] = true
		if k.forward(j, T, 0) && exists(j+1, spent) {
			return true
		}
		k.kept[j] = false
		u := k.c.Stage(j).UF
		return k.forward(j, T, u) && exists(j+1, spent+u)
	}
	fits = exists(1, 0)
	for j := range k.kept {
		k.kept[j] = false
	}
	return fits, !k.halted
}
