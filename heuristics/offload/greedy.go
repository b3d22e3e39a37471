package offload

import (
	"fmt"

	inst "github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// Choice is an offloading choice (k, d) of 002 §5: D1 = (k, 1), w_k leaves the GPU between
// F_k and B_k; D0 = (k, 0), between B_k and the next F_k.
type Choice struct {
	Layer int
	D1    bool
}

// Selection is the set of choices, by layer: Sel[k][1] for (k, 1), Sel[k][0] for (k, 0).
type Selection [][2]bool

// Select is 002 Alg. 1: start with every weight on the GPU, compute the excess memory E_o of
// every operation o (other layers' weights + M_o − M_GPU, SPEC §3), and while some E_o > 0 pick
// the choice of highest profit = Σ_{o covered} min(E_o, |w_k|) / cost, with cost 2|w_k|, halved
// when the other choice of the same layer is already selected (the discount) unless discount is
// false (Greedy*). (k, 1) covers F_{k+1} … F_L, B_L … B_{k+1}; (k, 0) covers B_{k−1} … B_1,
// F_1 … F_{k−1}. It fails when some operation cannot fit even with every other weight away.
func Select(p *inst.Problem, discount bool) (Selection, error) {
	L := p.L()
	var total int64
	for _, l := range p.Layers {
		total += l.W
	}
	// Operations: index j < L is F_{j+1}, j ≥ L is B_{2L−j}.
	E := make([]int64, 2*L)
	layer := func(j int) (int, bool) {
		if j < L {
			return j + 1, false
		}
		return 2*L - j, true
	}
	opIdx := func(i int, b bool) int {
		if b {
			return 2*L - i
		}
		return i - 1
	}
	for j := range E {
		i, b := layer(j)
		E[j] = total - p.Layer(i).W + p.OpMemory(i, b) - p.MGPU
	}
	covered := func(k int, d1 bool) []int {
		var ops []int
		if d1 {
			for j := opIdx(k, false) + 1; j < opIdx(k, true); j++ {
				ops = append(ops, j)
			}
		} else {
			for j := opIdx(k, true) + 1; j < 2*L; j++ {
				ops = append(ops, j)
			}
			for j := 0; j < opIdx(k, false); j++ {
				ops = append(ops, j)
			}
		}
		return ops
	}
	sel := make(Selection, L+1)
	for {
		worst := int64(0)
		for _, e := range E {
			worst = max(worst, e)
		}
		if worst <= 0 {
			return sel, nil
		}
		bestK, bestD, best := 0, false, 0.0
		for k := 1; k <= L; k++ {
			w := p.Layer(k).W
			if w == 0 {
				continue
			}
			for _, d1 := range []bool{true, false} {
				di := 0
				if d1 {
					di = 1
				}
				if sel[k][di] {
					continue
				}
				var benefit int64
				for _, j := range covered(k, d1) {
					benefit += max(0, min(E[j], w))
				}
				cost := 2 * float64(w)
				if discount && sel[k][1-di] {
					cost /= 2
				}
				if profit := float64(benefit) / cost; profit > best {
					bestK, bestD, best = k, d1, profit
				}
			}
		}
		if bestK == 0 {
			return nil, fmt.Errorf("offload: no offloading choice reduces the excess memory (%d B): the largest operation does not fit in M_GPU = %d B", worst, p.MGPU)
		}
		di := 0
		if bestD {
			di = 1
		}
		sel[bestK][di] = true
		for _, j := range covered(bestK, bestD) {
			E[j] = max(E[j]-p.Layer(bestK).W, 0)
		}
	}
}

// Schedule turns a selection into a periodic schedule (ordering rules of 002 §5: prefetches in
// the order the weights are needed, uploads first in first out) and validates it. Every
// operation starts as soon as its weights are back; a weight is prefetched during the operation
// before the one that needs it, and leaves right after its use: deleted after F_k when the CPU
// copy is current (thanks to the discount, an offload after B_k), else uploaded then deleted;
// offloaded after B_k. With discount false (Greedy*), w_k is uploaded again before the
// deletion after F_k even when the CPU copy is current.
//
// If that schedule breaks the memory limit (transfers in flight hold buffers), a conservative
// one is tried: prefetches start only once the previous operation has ended and no upload is in
// flight, and an operation waits for uploads in flight. The first that validates is returned.
func Schedule(p *inst.Problem, sel Selection, discount bool) (*schedule.Periodic, periodic.Report, error) {
	s, rep, err := build(p, sel, discount, false)
	if err == nil {
		return s, rep, nil
	}
	s, rep, err2 := build(p, sel, discount, true)
	if err2 == nil {
		return s, rep, nil
	}
	return nil, periodic.Report{}, fmt.Errorf("offload: greedy schedule invalid: %w", err)
}

func build(p *inst.Problem, sel Selection, discount, conservative bool) (*schedule.Periodic, periodic.Report, error) {
	L := p.L()
	s := &schedule.Periodic{OpStart: make([]float64, 2*L), Resident: make([]bool, L+1), CPUValid: make([]bool, L+1)}
	for i := 1; i <= L; i++ {
		s.Resident[i] = !sel[i][0]
		s.CPUValid[i] = sel[i][0]
	}
	dur := func(i int) float64 { return float64(p.Layer(i).W) / p.Beta }
	valid := append([]bool(nil), s.CPUValid...)
	var prefFree, offFree, t, prevStart, end float64
	gone := make([]float64, L+1)
	for j := 0; j < 2*L; j++ {
		i, back := j+1, false
		if j >= L {
			i, back = 2*L-j, true
		}
		start := t
		if conservative {
			start = max(start, offFree)
		}
		if (back && sel[i][1]) || (!back && sel[i][0]) {
			from := prevStart
			if conservative {
				from = max(t, offFree) // nothing in flight: no two buffers at once
			}
			ps := max(prefFree, gone[i], from)
			s.Transfers = append(s.Transfers, schedule.Transfer{Layer: i, Kind: schedule.Prefetch, Start: ps})
			prefFree = ps + dur(i)
			start = max(start, prefFree)
		}
		s.OpStart[j] = start
		prevStart = start
		u := p.Layer(i).UF
		if back {
			u = p.Layer(i).UB
		}
		t = start + u
		switch {
		case !back && sel[i][1]:
			del := t
			if !valid[i] || !discount {
				us := max(offFree, start)
				s.Transfers = append(s.Transfers, schedule.Transfer{Layer: i, Kind: schedule.Upload, Start: us})
				offFree = us + dur(i)
				del = max(t, offFree)
				valid[i] = true
			}
			s.Deletes = append(s.Deletes, schedule.Delete{Layer: i, Time: del})
			gone[i] = del
		case back && sel[i][0]:
			os := max(t, offFree)
			s.Transfers = append(s.Transfers, schedule.Transfer{Layer: i, Kind: schedule.Offload, Start: os})
			offFree = os + dur(i)
			gone[i] = offFree
		}
		if back {
			valid[i] = false
			if sel[i][0] {
				valid[i] = true // set again when its offload ends, within the period
			}
		}
		end = max(end, t, offFree, prefFree)
	}
	s.Period = end
	rep, err := periodic.Validate(p, s)
	if err != nil {
		return nil, periodic.Report{}, err
	}
	return s, rep, nil
}

// Greedy is 002's greedy algorithm: Select then Schedule, with the discount (Greedy) or
// without it (discount false: Greedy*).
func Greedy(p *inst.Problem, discount bool) (Selection, *schedule.Periodic, periodic.Report, error) {
	sel, err := Select(p, discount)
	if err != nil {
		return nil, nil, periodic.Report{}, err
	}
	s, rep, err := Schedule(p, sel, discount)
	return sel, s, rep, err
}

// Exhaustive tries every selection (4^L of them, L ≤ 8) with Schedule and returns the shortest
// valid period: the referee for the heuristics on tiny instances.
func Exhaustive(p *inst.Problem) (Selection, periodic.Report, error) {
	L := p.L()
	if L > 8 {
		return nil, periodic.Report{}, fmt.Errorf("offload: exhaustive search handles at most 8 layers, got %d", L)
	}
	var best Selection
	var bestRep periodic.Report
	for mask := 0; mask < 1<<(2*L); mask++ {
		sel := make(Selection, L+1)
		for i := 1; i <= L; i++ {
			sel[i][0] = mask>>(2*(i-1))&1 == 1
			sel[i][1] = mask>>(2*(i-1)+1)&1 == 1
		}
		if _, rep, err := Schedule(p, sel, true); err == nil && (best == nil || rep.Period < bestRep.Period) {
			best, bestRep = sel, rep
		}
	}
	if best == nil {
		return nil, periodic.Report{}, fmt.Errorf("offload: no selection gives a valid schedule")
	}
	return best, bestRep, nil
}
