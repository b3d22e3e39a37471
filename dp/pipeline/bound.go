package pipeline

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/dp"
	pl "github.com/memsched/memsched/instances/pipeline"
)

// table holds, for every part [s, e] and every number n of micro-batches in flight that a
// position of the search can give, the part's forward duration and least backward duration
// that fits (+Inf: none).
type table struct {
	L   int
	ns  []int       // the distinct n, ascending
	nix map[int]int // n → index in ns
	f   []float64   // at (s−1)·L + e−1
	b   []float64   // at ((s−1)·L + e−1)·len(ns) + index of n
	// tlo[i] = Σ_{ℓ≤i} (u_f + u_b): no part of stages 1..i runs in less (recomputation only
	// adds); ulf, ulb the same for u_f and u_b alone.
	tlo, ulf, ulb []float64
}

// It holds L²·(1 + len(ns)) values: past o.MaxMemory it is refused (*dp.TooLargeError), and
// o's stop or deadline stops it between rows (ErrStopped).
func newTable(p *pl.Problem, pc partCosts, maxS int, o Options) (*table, error) {
	L := p.L()
	t := &table{L: L, nix: map[int]int{}}
	for S := 1; S <= maxS; S++ {
		for k := 0; k < S; k++ {
			n := p.InFlight(k, S)
			if _, ok := t.nix[n]; !ok {
				t.nix[n] = -1
				t.ns = append(t.ns, n)
			}
		}
	}
	sortInts(t.ns)
	for i, n := range t.ns {
		t.nix[n] = i
	}
	if err := tableFits(fmt.Sprintf("pipeline part durations on %d stages", L), L, int64(8*(1+len(t.ns))), o); err != nil {
		return nil, err
	}
	poll := dp.Poll{Stop: o.Stop, Deadline: o.Deadline}
	if poll.Stopped() {
		return nil, ErrStopped // before allocating
	}
	t.f = make([]float64, L*L)
	t.b = make([]float64, L*L*len(t.ns))
	for s := 1; s <= L; s++ {
		if poll.Stopped() {
			return nil, ErrStopped
		}
		for e := s; e <= L; e++ {
			for i, n := range t.ns {
				f, b, ok := pc.cost(s, e, n)
				t.f[(s-1)*L+e-1] = f
				if !ok {
					b = math.Inf(1)
				}
				t.b[((s-1)*L+e-1)*len(t.ns)+i] = b
			}
		}
	}
	t.tlo, t.ulf, t.ulb = make([]float64, L+1), make([]float64, L+1), make([]float64, L+1)
	for l := 1; l <= L; l++ {
		st := p.Chain.Stage(l)
		t.ulf[l] = t.ulf[l-1] + st.UF
		t.ulb[l] = t.ulb[l-1] + st.UB
		t.tlo[l] = t.ulf[l] + t.ulb[l]
	}
	return t, nil
}

// partDurations give F and B of part [s, e] with n in flight (B = +Inf: it does not fit).
type partDurations interface {
	at(s, e, n int) (float64, float64)
}

// sumDurations are every part's Σ u_f and Σ u_b, fitting always (the fill-and-drain
// relaxation's), by prefix sums: no table (the table of L² parts took a second and 288 MB
// on 2001 stages).
type sumDurations struct {
	L      int
	pf, pb []float64 // Σ_{ℓ≤i} u_f, u_b, for i = 0..L+1
}

func newSumDurations(p *pl.Problem) sumDurations {
	L := p.L()
	d := sumDurations{L: L, pf: make([]float64, L+2), pb: make([]float64, L+2)}
	for l := 1; l <= L+1; l++ {
		st := p.Chain.Stage(l)
		d.pf[l], d.pb[l] = d.pf[l-1]+st.UF, d.pb[l-1]+st.UB
	}
	return d
}

// at returns the sums over [s, e] (the loss stage joins the part that ends at L).
func (d sumDurations) at(s, e, _ int) (float64, float64) {
	end := e
	if e == d.L {
		end = d.L + 1
	}
	return d.pf[end] - d.pf[s-1], d.pb[end] - d.pb[s-1]
}

// at returns F and B of part [s, e] with n in flight (B = +Inf: it does not fit).
func (t *table) at(s, e, n int) (float64, float64) {
	i := (s-1)*t.L + e - 1
	return t.f[i], t.b[i*len(t.ns)+t.nix[n]]
}

func sortInts(xs []int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// cutCost returns the cut after stage e: a^e forward plus δ^e back (0 for e = 0: no cut).
func cutCost(p *pl.Problem, e int) float64 {
	if e == 0 {
		return 0
	}
	cf, cb := p.CutTimes(e)
	return cf + cb
}

// fillDrainBound returns, for a pipeline of S GPUs, the least over every contiguous
// allocation of
//
//	max_k  Σ_{j<k} (F_j + B_j + c_j + c'_j) + m·(F_k + B_k)
//
// a lower bound on its makespan under either schedule: GPU k's first action F_k(0) waits for
// micro-batch 0's forwards and transfers on GPUs 0..k−1, it then runs 2m actions one after the
// other, and after its last one, B_k(m−1), the backwards and transfers of micro-batch m−1 on
// GPUs k−1..0 remain. Over allocations it is a min–max whose prefix terms add up, so a dynamic
// program over suffixes computes it exactly:
//
//	D(g, i) = min_{i ≤ e} max( m·t(i, e), t(i, e) + c_e + c'_e + D(g−1, e+1) ),  D(1, i) = m·t(i, L),
//
// where t is the part's F + B at the position's in-flight count, and D(S, 1) is the bound.
// It returns +Inf when no allocation on S GPUs fits.
func fillDrainBound(p *pl.Problem, t partDurations, S int) float64 {
	v := math.Inf(1)
	fillDrainLayers(p, t, S, func(g int) int { return p.InFlight(S-g, S) }, nil, func(g int, d float64) {
		if g == S {
			v = d
		}
	})
	return v
}

// fillDrainLayers runs fillDrainBound's DP for layers g = 1..S (layer g: the last g GPUs, at
// inflight(g) micro-batches in flight) and hands each layer's D(g, 1) to each; poll (nil:
// never) is read once per row, ErrStopped when it says stop. A bound for S GPUs reads D(S, 1);
// where the durations do not depend on the in-flight count, the layers are the same for every
// S and one run gives every S (fillDrainBounds).
func fillDrainLayers(p *pl.Problem, t partDurations, S int, inflight func(g int) int, poll *dp.Poll, each func(g int, d float64)) error {
	L, m := p.L(), float64(p.MicroBatches)
	inf := math.Inf(1)
	prev := make([]float64, L+2)
	cur := make([]float64, L+2)
	for i := range prev {
		prev[i] = inf
	}
	for g := 1; g <= S; g++ {
		n := inflight(g)
		for i := range cur {
			cur[i] = inf
		}
		for i := 1; i <= L; i++ {
			if poll != nil && poll.StoppedNow() {
				return ErrStopped
			}
			if g == 1 {
				f, b := t.at(i, L, n)
				cur[i] = m * (f + b)
				continue
			}
			for e := i; e <= L-g+1; e++ {
				f, b := t.at(i, e, n)
				if math.IsInf(b, 1) {
					continue
				}
				tt := f + b
				v := max(m*tt, tt+cutCost(p, e)+prev[e+1])
				cur[i] = min(cur[i], v)
			}
		}
		prev, cur = cur, prev
		each(g, prev[1])
	}
	return nil
}

// prefixBound returns P(g, i) for g = 1..S−1 and i = 1..L: the least over allocations of
// stages 1..i on GPUs 0..g−1 (of a pipeline of S GPUs) of max_{k<g} (A_k + m·t_k), with A_k
// relaxed to Σ_{ℓ<s_k}(u_f + u_b) + the cut just before GPU k. The search bounds a partial
// plan whose GPUs g..S−1 are chosen with P(g, s_g − 1).
func prefixBound(p *pl.Problem, t *table, S int) [][]float64 {
	L, m := t.L, float64(p.MicroBatches)
	inf := math.Inf(1)
	P := make([][]float64, S)
	for g := 1; g < S; g++ {
		P[g] = make([]float64, L+1)
		n := p.InFlight(g-1, S)
		for i := 0; i <= L; i++ {
			P[g][i] = inf
			if g == 1 {
				if i >= 1 {
					f, b := t.at(1, i, n)
					P[g][i] = m * (f + b)
				}
				continue
			}
			for i2 := g - 1; i2 < i; i2++ {
				f, b := t.at(i2+1, i, n)
				if math.IsInf(b, 1) || math.IsInf(P[g-1][i2], 1) {
					continue
				}
				v := max(P[g-1][i2], t.tlo[i2]+cutCost(p, i2)+m*(f+b))
				P[g][i] = min(P[g][i], v)
			}
		}
	}
	return P
}

// StoreAllMemory returns the least memory M at which some contiguous allocation on at most P
// GPUs fits with every part storing everything: the min over S ≤ min(P, L) and cuts of
// max_k (W_k + (n_k−1)·held_k + peak_k) (instances/pipeline.PartCosts.Memory; p.Memory is not
// read), by the min–max DP over suffixes of stages. Below it only recomputation fits.
//
// Each row of the DP sweeps the parts from its first stage (pl.StoreAllSweep): O(P²·L²) time
// and O(L) memory (it built every part's costs one by one before, O(L³): minutes on 2001
// stages). o's stop or deadline stops it between rows (ErrStopped).
func StoreAllMemory(p *pl.Problem, o Options) (int64, error) {
	L := p.L()
	poll := dp.Poll{Stop: o.Stop, Deadline: o.Deadline}
	best := int64(math.MaxInt64)
	for S := 1; S <= min(p.GPUs, L); S++ {
		// D[i]: the least largest memory of stages i..L on the last g GPUs.
		D := make([]int64, L+2)
		for g := 1; g <= S; g++ {
			k := S - g
			n := p.InFlight(k, S)
			next := make([]int64, L+2)
			for i := 1; i <= L; i++ {
				if poll.Stopped() {
					return 0, ErrStopped
				}
				next[i] = math.MaxInt64
				last := L - g + 1 // the last part that leaves a stage to each of the g−1 GPUs after it
				if g == 1 {
					last = L
				}
				if i > last {
					continue
				}
				pl.StoreAllSweep(p.Chain, i, func(e int, pc pl.PartCosts) bool {
					switch {
					case g == 1 && e == L:
						next[i] = pc.Memory(n)
					case g > 1:
						next[i] = min(next[i], max(pc.Memory(n), D[e+1]))
					}
					return e < last
				})
			}
			D = next
		}
		best = min(best, D[1])
	}
	return best, nil
}
