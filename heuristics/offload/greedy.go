package offload

import (
	"errors"
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
	return SelectUntil(p, discount, nil)
}

// ErrStopped says that a heuristic was stopped (its stop channel closed: a deadline or
// Ctrl-C) before it finished.
var ErrStopped = errors.New("offload: stopped before the heuristic finished")

// closed reports whether stop is closed (never for nil).
func closed(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// SelectUntil is Select ended with ErrStopped when stop closes (checked before each choice:
// O(L²) work each, up to 2L of them — seconds on a 1000-block GPT-2).
func SelectUntil(p *inst.Problem, discount bool, stop <-chan struct{}) (Selection, error) {
	L := p.L()
	var total int64
	for _, l := range p.Layers {
		total += l.W
	}
	// Operations: index j < L is F_{j+1}, j ≥ L is B_{2L−j}.
	E := make([]int64, 2*L)
	opIdx := func(i int, b bool) int { return schedule.PeriodicIndex(L, i, b) }
	for j := range E {
		i, b := schedule.PeriodicOp(L, j)
		E[j] = total - p.Layer(i).W + p.OpMemory(i, b) - p.MGPU
	}
	// covered returns the operations a choice covers as two index ranges [a, b) (the second
	// one empty for (k, 1)): no allocation, Alg. 1 evaluates O(L) choices O(L) times.
	covered := func(k int, d1 bool) (r [2][2]int) {
		if d1 {
			r[0] = [2]int{opIdx(k, false) + 1, opIdx(k, true)}
		} else {
			r[0] = [2]int{opIdx(k, true) + 1, 2 * L}
			r[1] = [2]int{0, opIdx(k, false)}
		}
		return r
	}
	sel := make(Selection, L+1)
	for {
		if closed(stop) {
			return nil, ErrStopped
		}
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
				for _, rg := range covered(k, d1) {
					for j := rg[0]; j < rg[1]; j++ {
						benefit += max(0, min(E[j], w))
					}
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
		for _, rg := range covered(bestK, bestD) {
			for j := rg[0]; j < rg[1]; j++ {
				E[j] = max(E[j]-p.Layer(bestK).W, 0)
			}
		}
	}
}

// Greedy is 002's greedy algorithm: Select (Alg. 1) then Schedule (Alg. 2), with the discount
// (Greedy) or without it (discount false: Greedy*, which also uploads w_k again after F_k when
// both choices of layer k are selected).
func Greedy(p *inst.Problem, discount bool) (Selection, *schedule.Periodic, periodic.Report, error) {
	return GreedyUntil(p, discount, nil)
}

// GreedyUntil is Greedy ended with ErrStopped when stop closes (SelectUntil).
func GreedyUntil(p *inst.Problem, discount bool, stop <-chan struct{}) (Selection, *schedule.Periodic, periodic.Report, error) {
	sel, err := SelectUntil(p, discount, stop)
	if err != nil {
		return nil, nil, periodic.Report{}, err
	}
	s, rep, err := Schedule(p, sel, discount)
	return sel, s, rep, err
}

// Exhaustive tries every selection (4^L of them, L ≤ 8) with Schedule (Alg. 2, every cut point)
// and returns the shortest valid period: the referee for the selection heuristics on tiny
// instances (it still schedules greedily, so it is not the optimum of OFF).
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
