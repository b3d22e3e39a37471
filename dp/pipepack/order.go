package pipepack

import (
	"fmt"
	"math"
	"sort"

	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
)

// Actions returns the per-rank action lists plan runs with under p, nil when the named order
// applies: a contiguous plan (one part per GPU in chain order) runs p's schedule as
// torch.distributed.pipelining orders it, and a non-contiguous one under GPipe runs the named
// looped breadth-first order (instances/pipeline.Actions). A non-contiguous plan under 1F1B
// runs "merged 1F1B": part k of the S parts keeps the 1F1B order of a pipeline of S virtual
// stages (warm-up w = min(m, S−k) forwards, then B(j) F(w+j), then the remaining backwards),
// and each GPU, whenever it is free, runs among its parts' next actions the one whose input
// arrives first (backward first on a tie, then the lower part). The lists are built by that
// list simulation, with the durations and links verify/pipeline replays, so replaying them
// gives the same times; no part ever holds more than its warm-up w micro-batches (the count
// MemoryBound charges). The simulation never deadlocks: an action whose inputs have arrived is
// its part's next action, so an idle GPU always has one to run.
func Actions(p *pl.Problem, plan *schedule.Pipeline) ([][]schedule.Action, error) {
	if plan.Contiguous() || p.Schedule == pl.GPipe {
		return nil, nil
	}
	fs, err := figures(p, plan)
	if err != nil {
		return nil, err
	}
	return merged(p, plan, fs), nil
}

// oneFOneB returns part k's own 1F1B order in a pipeline of S virtual stages.
func oneFOneB(k, S, m int) []schedule.Action {
	w := min(m, S-k)
	as := make([]schedule.Action, 0, 2*m)
	for mu := 0; mu < w; mu++ {
		as = append(as, schedule.Action{Part: k, MicroBatch: mu})
	}
	for j := 0; j < m-w; j++ {
		as = append(as, schedule.Action{Part: k, Backward: true, MicroBatch: j}, schedule.Action{Part: k, MicroBatch: w + j})
	}
	for j := m - w; j < m; j++ {
		as = append(as, schedule.Action{Part: k, Backward: true, MicroBatch: j})
	}
	return as
}

// merged is the list simulation of Actions.
func merged(p *pl.Problem, plan *schedule.Pipeline, fs []partFigures) [][]schedule.Action {
	S, m := len(plan.Parts), p.MicroBatches
	nan := math.NaN()
	orders := make([][]schedule.Action, S)
	arrF, arrB := make([][]float64, S), make([][]float64, S)
	for k := range orders {
		orders[k] = oneFOneB(k, S, m)
		arrF[k], arrB[k] = make([]float64, m), make([]float64, m)
		for mu := range arrF[k] {
			arrF[k][mu], arrB[k][mu] = nan, nan
			if k == 0 {
				arrF[k][mu] = 0
			}
		}
	}
	type link struct{ from, to int }
	linkFree := map[link]float64{}
	send := func(from, to int, t, d float64) float64 {
		if from == to {
			return t
		}
		l := link{from, to}
		s := max(t, linkFree[l])
		linkFree[l] = s + d
		return s + d
	}
	free := make([]float64, p.GPUs)
	ptr := make([]int, S)
	out := make([][]schedule.Action, p.GPUs)
	for done := 0; done < 2*m*S; done++ {
		best, bestStart := -1, math.Inf(1)
		for k := 0; k < S; k++ {
			if ptr[k] == len(orders[k]) {
				continue
			}
			a := orders[k][ptr[k]]
			arr := arrF[k][a.MicroBatch]
			if a.Backward {
				arr = arrB[k][a.MicroBatch]
			}
			if math.IsNaN(arr) {
				continue
			}
			start := max(free[fs[k].gpu], arr)
			if best < 0 || start < bestStart || (start == bestStart && a.Backward && !orders[best][ptr[best]].Backward) {
				best, bestStart = k, start
			}
		}
		if best < 0 {
			panic("pipepack: merged 1F1B deadlocked (a bug: an action whose inputs are there is always its part's next)")
		}
		k := best
		a := orders[k][ptr[k]]
		ptr[k]++
		g := fs[k].gpu
		var end float64
		if a.Backward {
			end = bestStart + fs[k].b
			if k > 0 {
				arrB[k-1][a.MicroBatch] = send(g, fs[k-1].gpu, end, fs[k-1].cut[1])
			}
		} else {
			end = bestStart + fs[k].f
			if k+1 < S {
				arrF[k+1][a.MicroBatch] = send(g, fs[k+1].gpu, end, fs[k].cut[0])
			} else {
				arrB[k][a.MicroBatch] = end
			}
		}
		free[g] = end
		out[g] = append(out[g], a)
	}
	return out
}

// Modulo returns the per-rank action lists of the 1-periodic (modulo) schedule of plan with
// period T (research §1.5, k-periodic schedules with k = 1): one micro-batch's actions on each
// GPU are packed one after the other into a window [0, T) — its parts' forwards in chain order,
// then their backwards in reverse — at offsets o_a, each action a is given the start
// σ_a = o_a + k_a·T with the least k_a ≥ 0 that lets it follow its predecessor in the
// micro-batch (F_0 … F_{S−1} B_{S−1} … B_0, transfers counted as delays), and micro-batch μ
// runs a at σ_a + μT. Each GPU's list is its actions sorted by that start. T must be at least
// every GPU's Σ(F + B) (Period): then no two actions of a GPU overlap, and with free links
// replaying the lists (as soon as possible, in that order) ends every action no later than its
// modulo start plus its duration: the makespan is at most ModuloLatency + (m−1)·T, so the
// period is T. With links the transfers may queue and the replay is the judge.
func Modulo(p *pl.Problem, plan *schedule.Pipeline, T float64) ([][]schedule.Action, error) {
	ops, err := moduloOps(p, plan, T)
	if err != nil {
		return nil, err
	}
	m := p.MicroBatches
	type timed struct {
		o  modOp
		mu int
	}
	per := make([][]timed, p.GPUs)
	for _, o := range ops {
		for mu := 0; mu < m; mu++ {
			per[o.gpu] = append(per[o.gpu], timed{o, mu})
		}
	}
	out := make([][]schedule.Action, p.GPUs)
	for g, ts := range per {
		sort.Slice(ts, func(i, j int) bool {
			a, b := ts[i], ts[j]
			ka, kb := a.o.k+int64(a.mu), b.o.k+int64(b.mu)
			if ka != kb {
				return ka < kb
			}
			if a.o.off != b.o.off {
				return a.o.off < b.o.off
			}
			if a.o.serial != b.o.serial {
				return a.o.serial < b.o.serial
			}
			return a.mu < b.mu
		})
		for _, t := range ts {
			a := t.o.a
			a.MicroBatch = t.mu
			out[g] = append(out[g], a)
		}
	}
	return out, nil
}

// ModuloLatency returns max_a(σ_a + dur_a) of Modulo's schedule of plan with period T, the
// time one micro-batch spans in it: with free links the replayed makespan of Modulo's lists
// is at most this plus (m−1)·T.
func ModuloLatency(p *pl.Problem, plan *schedule.Pipeline, T float64) (float64, error) {
	ops, err := moduloOps(p, plan, T)
	if err != nil {
		return 0, err
	}
	last := ops[len(ops)-1]
	return last.off + float64(last.k)*T + last.dur, nil
}

// modOp is one action of a micro-batch in the modulo schedule.
type modOp struct {
	a      schedule.Action
	off    float64 // o_a in [0, T)
	k      int64   // k_a
	dur    float64
	gpu    int
	serial int // position in the micro-batch's chain of actions
}

func moduloOps(p *pl.Problem, plan *schedule.Pipeline, T float64) ([]modOp, error) {
	if !(T > 0) || math.IsInf(T, 1) {
		return nil, fmt.Errorf("pipepack: Modulo: the period must be positive and finite, got %g", T)
	}
	fs, err := figures(p, plan)
	if err != nil {
		return nil, err
	}
	S := len(plan.Parts)
	load := map[int]float64{}
	for _, pf := range fs {
		load[pf.gpu] += pf.f + pf.b
	}
	for g, v := range load {
		if v > T*(1+1e-12) {
			return nil, fmt.Errorf("pipepack: Modulo: GPU %d has %g s per micro-batch, above the period %g", g, v, T)
		}
	}
	// The chain of one micro-batch's actions: index i < S is F_i, i ≥ S is B_{2S−1−i}.
	ops := make([]modOp, 2*S)
	for i := range ops {
		if i < S {
			ops[i] = modOp{a: schedule.Action{Part: i}, dur: fs[i].f, gpu: fs[i].gpu, serial: i}
		} else {
			k := 2*S - 1 - i
			ops[i] = modOp{a: schedule.Action{Part: k, Backward: true}, dur: fs[k].b, gpu: fs[k].gpu, serial: i}
		}
	}
	used := map[int]float64{}
	for i := range ops {
		ops[i].off = used[ops[i].gpu]
		used[ops[i].gpu] += ops[i].dur
	}
	for i := 1; i < len(ops); i++ {
		prev := ops[i-1]
		ready := prev.off + float64(prev.k)*T + prev.dur
		switch {
		case i < S:
			ready += fs[i-1].cut[0]
		case i > S:
			ready += fs[2*S-1-i].cut[1]
		}
		k := int64(math.Max(0, math.Ceil((ready-ops[i].off)/T)))
		for ops[i].off+float64(k)*T < ready {
			k++
		}
		ops[i].k = k
	}
	return ops, nil
}
