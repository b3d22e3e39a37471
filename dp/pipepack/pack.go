package pipepack

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"time"
	"unsafe"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// Options control Pack. The zero value searches until done.
type Options struct {
	// MaxNodes caps the states the search expands (0: DefaultMaxNodes). Past it, or past
	// Deadline, or once Stop is closed, Pack returns its best plan so far, not proven optimal.
	MaxNodes int
	Deadline time.Time
	Stop     <-chan struct{}
	// MinParts and MaxParts bound the parts of a plan (0: 1 and L). With MinParts > P every
	// plan is non-contiguous (some GPU holds two parts).
	MinParts, MaxParts int
	// MaxMemory caps its table of every part's costs, L² entries (0: dp.DefaultMaxMemory):
	// past it Pack returns a *dp.TooLargeError before allocating.
	MaxMemory int64
}

// DefaultMaxNodes is Pack's default cap on expanded states.
const DefaultMaxNodes = 5_000_000

// Result is Pack's answer.
type Result struct {
	// Feasible is false when no allocation fits the memory model (proven when Optimal).
	Feasible bool
	// Plan is the allocation with its per-rank actions when it needs them (Actions), Replay
	// and Makespan its replay by verify/pipeline under the problem.
	Plan     *schedule.Pipeline
	Replay   *vpl.Result
	Makespan float64
	// Objective is the search's value of Plan: the largest of every GPU's Σ(F + B) and every
	// cut's own transfer times (each cut counted alone, not summed with the other cuts that
	// share its link); Period is the plan's steady-state period with the links' sums (Period),
	// ≥ Objective, equal when the links are free or no two cuts share a link direction.
	Objective, Period float64
	// Optimal reports that the search finished: no allocation whose memory bound fits has a
	// smaller Objective.
	Optimal bool
	// Nodes is the number of states expanded.
	Nodes int
	// Note says why the search stopped early.
	Note string
}

// gpuState is what the search knows of a GPU: its load Σ(F+B) per micro-batch, Σ w + Σ n·held
// of its parts (base) and max(own − held) over them (extra); its memory bound is base + extra.
type gpuState struct {
	load        float64
	base, extra int64
}

// partCost is the store-all figures of part [s, e].
type partCost struct {
	t           float64
	w, held, pk int64
}

// packer is one search.
type packer struct {
	p       *pl.Problem
	o       Options
	L, P    int
	costs   []partCost // at (s−1)·L + e−1
	prefix  []float64  // prefix[i] = Σ_{ℓ≤i} (u_f + u_b), the loss stage with L
	gpus    []gpuState // by label (len = GPUs in use)
	part    []int      // the parts placed: first stages, from the end
	lab     []int      // their GPUs
	best    []int
	bestLab []int
	inc     float64
	nodes   int
	poll    dp.Poll // o.Stop and o.Deadline, read every 256 nodes; MaxNodes halts it
	memo    map[string]float64
	memoCap int
	memFree bool // memory never binds: keys leave it out
	keyBuf  []byte
	sortBuf []gpuState
}

// Pack returns the non-contiguous allocation of p on at most P GPUs with the least
// Objective (the period, each cut's transfers counted alone) among those whose MemoryBound
// fits every GPU — parts storing everything, run with Actions (merged 1F1B, or looped GPipe)
// — and replays it. Contiguous allocations are among them (one part per GPU).
//
// It is a depth-first search over the chain from its end: the next part [s, b] (b the last
// stage left) goes on a GPU other than the previous part's — one already in use, or a fresh
// one — with the in-flight count n of its position from the end (1F1B: min(m, j+1) for the
// (j+1)-th part from the end, the warm-up of that virtual stage; GPipe: m), adding its F + B
// to the GPU's load and W + n·held to its memory. States — the stages left, the position's
// count, the previous part's GPU and the others as a multiset (GPUs are identical) — are kept
// in a transposition table with the least largest cut transfer that reached them; a state is
// dropped when its largest load or cut reaches the incumbent, when the loads and the work left
// cannot all stay below it (Σ loads + work left ≥ P·incumbent), or when a GPU's memory bound
// passes M. Children are tried in order of max(largest load, (Σ loads + work left)/P), then of
// how close the part is to the work left per part expected. When it finishes, the answer is
// optimal for its objective (Result.Optimal).
func Pack(p *pl.Problem, o Options) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	L := p.L()
	k := &packer{p: p, o: o, L: L, P: min(p.GPUs, L), inc: math.Inf(1), memo: map[string]float64{}, memoCap: 500_000,
		poll: dp.Poll{Stop: o.Stop, Deadline: o.Deadline, Every: 256}}
	if k.o.MaxNodes <= 0 {
		k.o.MaxNodes = DefaultMaxNodes
	}
	if k.o.MaxParts <= 0 || k.o.MaxParts > L {
		k.o.MaxParts = L
	}
	k.o.MinParts = max(k.o.MinParts, 1)
	if k.o.MinParts > k.o.MaxParts {
		return nil, fmt.Errorf("pipepack: at least %d parts, at most %d (L = %d)", k.o.MinParts, k.o.MaxParts, L)
	}
	if err := dp.CheckTable(fmt.Sprintf("packing costs of every part on %d stages", L), int64(L)*int64(L), int64(unsafe.Sizeof(partCost{})),
		o.MaxMemory, "merge stages (fewer, coarser layers) or raise --max-memory"); err != nil {
		return nil, err
	}
	k.costs = make([]partCost, L*L)
	var totalW, worst int64
	// One sweep per first stage (pl.StoreAllSweep, O(L²) in all, the same values as
	// StoreAllCosts part by part, which took O(L³): 8 s on 2001 stages past a 2 s limit).
	for s := 1; s <= L; s++ {
		if k.poll.Stopped() {
			return &Result{}, nil // stopped before any plan: not feasible, not optimal
		}
		pl.StoreAllSweep(p.Chain, s, func(e int, pc pl.PartCosts) bool {
			k.costs[(s-1)*L+e-1] = partCost{t: pc.F + pc.B, w: pc.W, held: pc.Held, pk: pc.Peak}
			return true
		})
	}
	k.prefix = make([]float64, L+1)
	for l := 1; l <= L; l++ {
		st := p.Chain.Stage(l)
		k.prefix[l] = k.prefix[l-1] + st.UF + st.UB
		worst = satAdd(worst, max(st.ABar, st.A)+p.Chain.SizeA(l-1))
		totalW = satAdd(totalW, st.W)
	}
	loss := p.Chain.Stage(L + 1)
	k.prefix[L] += loss.UF + loss.UB
	worst = satAdd(worst, loss.ABar)
	totalW = satAdd(totalW, loss.W)
	// Memory never binds when every stage on one GPU, each part holding m micro-batches and
	// its largest own peak on top, fits M.
	var maxOwn int64
	for _, c := range k.costs {
		maxOwn = max(maxOwn, c.pk)
	}
	mw, _ := instances.MulBytes(int64(p.MicroBatches), worst)
	k.memFree = satAdd(satAdd(totalW, mw), maxOwn) <= p.Memory
	k.seed()
	k.dfs(L, 0, -1, 0)
	res := &Result{Nodes: k.nodes, Optimal: !k.poll.Halted()}
	if k.poll.Halted() {
		res.Note = fmt.Sprintf("stopped after %d states (node cap %d or the time limit): the best allocation found, not proven optimal", k.nodes, k.o.MaxNodes)
	}
	if k.best == nil {
		return res, nil
	}
	// Rebuild the assignment stage → GPU from the parts (placed from the end).
	gpu := make([]int, L)
	b := L
	for i, s := range k.best {
		for l := s; l <= b; l++ {
			gpu[l-1] = k.bestLab[i]
		}
		b = s - 1
	}
	plan := Alloc(gpu)
	out, rep, err := Execute(p, plan)
	if err != nil {
		return nil, err
	}
	per, err := Period(p, out)
	if err != nil {
		return nil, err
	}
	bound, err := MemoryBound(p, out)
	if err != nil {
		return nil, err
	}
	for g, v := range bound {
		if v > p.Memory {
			return nil, fmt.Errorf("pipepack: internal error: plan %v: GPU %d's memory bound %d exceeds M = %d", out, g, v, p.Memory)
		}
		if rep.Peak[g] > v {
			return nil, fmt.Errorf("pipepack: internal error: plan %v: GPU %d replays to a peak of %d B, above its bound %d B", out, g, rep.Peak[g], v)
		}
	}
	if !rep.Fits() {
		return nil, fmt.Errorf("pipepack: internal error: plan %v does not fit: %w", out, rep.Violation)
	}
	if per < k.inc*(1-1e-9) {
		return nil, fmt.Errorf("pipepack: internal error: plan %v: period %g below the search's objective %g", out, per, k.inc)
	}
	res.Feasible, res.Plan, res.Replay, res.Makespan = true, out, rep, rep.Makespan
	res.Objective, res.Period = k.inc, per
	return res, nil
}

func (k *packer) cost(s, e int) partCost { return k.costs[(s-1)*k.L+e-1] }

func (k *packer) inFlight(j int) int {
	if k.p.Schedule == pl.GPipe {
		return k.p.MicroBatches
	}
	return min(k.p.MicroBatches, j+1)
}

func (k *packer) stopped() bool {
	if k.nodes >= k.o.MaxNodes {
		k.poll.Halt()
	}
	return k.poll.Stopped()
}

// key is the canonical form of a state: stages left b, the position's count class (the parts
// placed when their number is bounded), the previous part's GPU and the multiset of the others.
func (k *packer) key(b, j, prev int) string {
	buf := k.keyBuf[:0]
	jc := 0
	if !k.memFree && k.p.Schedule == pl.OneFOneB {
		jc = min(j, k.p.MicroBatches-1)
	}
	if k.o.MinParts > 1 || k.o.MaxParts < k.L {
		jc = j // the parts left depend on it
	}
	buf = binary.AppendUvarint(buf, uint64(b))
	buf = binary.AppendUvarint(buf, uint64(jc))
	put := func(g gpuState) {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(g.load))
		if !k.memFree {
			buf = binary.AppendVarint(buf, g.base)
			buf = binary.AppendVarint(buf, g.extra)
		}
	}
	if prev >= 0 {
		put(k.gpus[prev])
	}
	buf = append(buf, '|')
	k.sortBuf = k.sortBuf[:0]
	for i, g := range k.gpus {
		if i != prev {
			k.sortBuf = append(k.sortBuf, g)
		}
	}
	sort.Slice(k.sortBuf, func(i, j int) bool { return less(k.sortBuf[i], k.sortBuf[j]) })
	for _, g := range k.sortBuf {
		put(g)
	}
	k.keyBuf = buf
	return string(buf)
}

func less(a, b gpuState) bool {
	if a.load != b.load {
		return a.load < b.load
	}
	if a.base != b.base {
		return a.base < b.base
	}
	return a.extra < b.extra
}

// move is one child of a state: part [s, b] on GPU label g (len(gpus): a fresh one).
type move struct {
	s, g    int
	maxLoad float64
	cut     float64
	est     float64 // max(maxLoad, (Σ loads + work left)/P): the order of the children
	off     float64 // |part time − the time per part left|: the tie-break
}

// dfs expands the state with stages 1..b left, j parts placed, the previous part on GPU prev
// (-1: none), the largest cut transfer so far maxCut.
func (k *packer) dfs(b, j, prev int, maxCut float64) {
	if b == 0 {
		if j < k.o.MinParts {
			return
		}
		v := maxCut
		for _, g := range k.gpus {
			v = max(v, g.load)
		}
		if v < k.inc {
			k.inc = v
			k.best = append(k.best[:0], k.part...)
			k.bestLab = append(k.bestLab[:0], k.lab...)
		}
		return
	}
	if j >= k.o.MaxParts || k.stopped() {
		return
	}
	key := k.key(b, j, prev)
	if old, ok := k.memo[key]; ok && old <= maxCut {
		return
	}
	if len(k.memo) < k.memoCap {
		k.memo[key] = maxCut
	}
	k.nodes++
	n := k.inFlight(j)
	var curMax, sum float64
	for _, g := range k.gpus {
		curMax = max(curMax, g.load)
		sum += g.load
	}
	var moves []move
	// Each part after this one takes a stage at least, and this must be the last part when
	// no other may follow.
	lo, hi := 1, b // the part is [s, b], s in lo..hi
	if left := k.o.MinParts - j - 1; left > 0 {
		lo = 1 + left
	}
	if j+1 == k.o.MaxParts {
		hi = min(hi, 1)
	}
	// The time per part to aim at, for the order of the children only: the work left over
	// the parts expected (P in all, or MinParts).
	target := k.prefix[b] / float64(max(1, min(b, max(k.o.MinParts, k.P)-j)))
	for s := hi; s >= lo; s-- {
		c := k.cost(s, b)
		cut := 0.0
		if b < k.L {
			cf, cb := k.p.CutTimes(b)
			cut = max(cf, cb)
		}
		newCut := max(maxCut, cut)
		if newCut >= k.inc {
			continue
		}
		// Work left after this part cannot all stay below the incumbent.
		if sum+c.t+k.prefix[s-1] >= float64(k.P)*k.inc && !math.IsInf(k.inc, 1) {
			continue
		}
		mem, _ := instances.MulBytes(int64(n), c.held)
		add := gpuState{load: c.t, base: satAdd(c.w, mem), extra: c.pk - c.held}
		seen := map[gpuState]bool{}
		for g := 0; g <= len(k.gpus) && g < k.P; g++ {
			if g == prev {
				continue
			}
			var cur gpuState
			if g < len(k.gpus) {
				cur = k.gpus[g]
				if seen[cur] {
					continue // an identical GPU was tried
				}
				seen[cur] = true
			}
			nx := gpuState{load: cur.load + add.load, base: satAdd(cur.base, add.base), extra: max(cur.extra, add.extra)}
			if satAdd(nx.base, nx.extra) > k.p.Memory {
				continue
			}
			ml := max(curMax, nx.load, newCut)
			if ml >= k.inc {
				continue
			}
			est := max(ml, (sum+c.t+k.prefix[s-1])/float64(k.P))
			moves = append(moves, move{s: s, g: g, maxLoad: ml, cut: newCut, est: est, off: math.Abs(c.t - target)})
		}
	}
	sort.SliceStable(moves, func(a, b int) bool {
		if moves[a].est != moves[b].est {
			return moves[a].est < moves[b].est
		}
		return moves[a].off < moves[b].off
	})
	for _, mv := range moves {
		if mv.maxLoad >= k.inc || k.stopped() {
			if k.poll.Halted() {
				return
			}
			continue
		}
		c := k.cost(mv.s, b)
		mem, _ := instances.MulBytes(int64(n), c.held)
		fresh := mv.g == len(k.gpus)
		if fresh {
			k.gpus = append(k.gpus, gpuState{})
		}
		old := k.gpus[mv.g]
		k.gpus[mv.g] = gpuState{load: old.load + c.t, base: satAdd(old.base, satAdd(c.w, mem)), extra: max(old.extra, c.pk-c.held)}
		k.part = append(k.part, mv.s)
		k.lab = append(k.lab, mv.g)
		k.dfs(mv.s-1, j+1, mv.g, mv.cut)
		k.part = k.part[:len(k.part)-1]
		k.lab = k.lab[:len(k.lab)-1]
		k.gpus[mv.g] = old
		if fresh {
			k.gpus = k.gpus[:len(k.gpus)-1]
		}
	}
}

// seed starts the search from the best contiguous allocation of its objective (one part per
// GPU, S ≤ min(P, MaxParts) parts): for each S, the chains-on-chains dynamic program over the
// parts from the end, D(g, i) = min_{e ≥ i} max(t(i, e), cut(e), D(g−1, e+1)), a part fitting
// when W + n·held + (own − held) ≤ M at its position's count n. It is one of the search's
// own allocations, so the incumbent is a real plan from the first node on.
func (k *packer) seed() {
	L := k.L
	inf := math.Inf(1)
	cut := func(e int) float64 {
		if e >= L {
			return 0
		}
		cf, cb := k.p.CutTimes(e)
		return max(cf, cb)
	}
	for S := k.o.MinParts; S <= min(k.P, k.o.MaxParts); S++ {
		// D[g][i]: stages i..L on the last g parts (positions g−1..0 from the end).
		D := make([][]float64, S+1)
		arg := make([][]int, S+1)
		for g := 1; g <= S; g++ {
			D[g], arg[g] = make([]float64, L+2), make([]int, L+2)
			n := k.inFlight(g - 1)
			for i := 1; i <= L; i++ {
				D[g][i] = inf
				lo, hi := i, L
				if g == 1 {
					lo = L
				} else {
					hi = L - g + 1
				}
				for e := lo; e <= hi; e++ {
					c := k.cost(i, e)
					mem, _ := instances.MulBytes(int64(n), c.held)
					if satAdd(satAdd(c.w, mem), c.pk-c.held) > k.p.Memory {
						continue
					}
					v := max(c.t, cut(e))
					if g > 1 {
						v = max(v, D[g-1][e+1])
					}
					if v < D[g][i] {
						D[g][i], arg[g][i] = v, e
					}
				}
			}
		}
		if D[S][1] >= k.inc {
			continue
		}
		k.inc = D[S][1]
		// Parts from the end, as the search records them: first stages and GPU labels.
		var firsts []int
		i := 1
		for g := S; g >= 1; g-- {
			firsts = append(firsts, i)
			i = arg[g][i] + 1
		}
		k.best, k.bestLab = k.best[:0], k.bestLab[:0]
		for j := len(firsts) - 1; j >= 0; j-- {
			k.best = append(k.best, firsts[j])
			k.bestLab = append(k.bestLab, len(firsts)-1-j)
		}
	}
}
