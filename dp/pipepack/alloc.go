package pipepack

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// Alloc returns the plan of the assignment gpu[ℓ−1] = the GPU of stage ℓ (ℓ = 1..L; the loss
// stage goes with stage L): its parts are the maximal runs of consecutive stages on one GPU, in
// chain order, each storing everything. GPUs are renumbered by first appearance along the
// chain (stage 1's GPU becomes 0, the next new one 1, …): GPUs are identical, so this changes
// nothing but the names, and a contiguous allocation comes out as part k on GPU k. It panics
// on an empty assignment or a negative GPU (a programmer error).
func Alloc(gpu []int) *schedule.Pipeline {
	if len(gpu) == 0 {
		panic("pipepack: Alloc: no stage")
	}
	names := map[int]int{}
	plan := &schedule.Pipeline{}
	for i, g := range gpu {
		if g < 0 {
			panic("pipepack: Alloc: negative GPU")
		}
		if _, ok := names[g]; !ok {
			names[g] = len(names)
		}
		l := i + 1
		if i > 0 && gpu[i-1] == g {
			plan.Parts[len(plan.Parts)-1].Last = l
			continue
		}
		plan.Parts = append(plan.Parts, schedule.Part{First: l, Last: l, GPU: names[g]})
	}
	return plan
}

// Assignment returns each stage's GPU in plan (the inverse of Alloc, without renumbering).
func Assignment(plan *schedule.Pipeline) []int {
	var out []int
	for _, pt := range plan.Parts {
		for l := pt.First; l <= pt.Last; l++ {
			out = append(out, pt.GPU)
		}
	}
	return out
}

// partFigures are one part's durations and memory figures as verify/pipeline replays them.
type partFigures struct {
	f, b      float64
	held, w   int64
	own       int64 // the largest memory of one micro-batch's own operations on the part
	inFlight  int   // micro-batches the part holds at most in its order (Actions)
	gpu       int
	cut       [2]float64 // transfer times of the cut after the part (a forward, δ back); 0 on the last
	nextGPU   int
	lastStage int
}

// figures replays each part of plan for one micro-batch (verify/pipeline, the looped order of
// GPipe with m = 1 and no memory limit: a part's durations and memory figures do not depend
// on the order) and returns its figures with the in-flight count of the execution Actions
// gives under p's schedule: the part at chain position k of S holds p.InFlight(k, S).
func figures(p *pl.Problem, plan *schedule.Pipeline) ([]partFigures, error) {
	q := *p
	q.Schedule, q.MicroBatches, q.Memory = pl.GPipe, 1, instances.MaxBytes
	bare := &schedule.Pipeline{Parts: plan.Parts}
	rep, err := vpl.Replay(&q, bare)
	if err != nil {
		return nil, err
	}
	S := len(plan.Parts)
	out := make([]partFigures, S)
	for k, pt := range plan.Parts {
		r := rep.Parts[k]
		out[k] = partFigures{f: r.F, b: r.B, held: r.Held, w: r.W, own: max(r.PeakF, r.PeakB),
			inFlight: p.InFlight(k, S), gpu: pt.GPU, nextGPU: -1, lastStage: pt.Last}
		if k+1 < S {
			cf, cb := p.CutTimes(pt.Last)
			out[k].cut = [2]float64{cf, cb}
			out[k].nextGPU = plan.Parts[k+1].GPU
		}
	}
	return out, nil
}

// Period returns the steady-state period of plan's allocation (seconds per micro-batch): the
// largest of every GPU's Σ over its parts of (F + B) and every link's Σ over the cuts it
// carries of their transfer times, in each direction (a link joins an ordered pair of GPUs,
// as in verify/pipeline). No order runs faster in the steady state — each GPU and each link
// has that much to do per micro-batch — and the 1-periodic order Modulo reaches it when the
// links are free (Modulo's doc). Durations are the validator's (a part with a sequence runs
// its recomputations too).
func Period(p *pl.Problem, plan *schedule.Pipeline) (float64, error) {
	fs, err := figures(p, plan)
	if err != nil {
		return 0, err
	}
	return period(fs), nil
}

func period(fs []partFigures) float64 {
	load := map[int]float64{}
	links := map[[2]int]float64{}
	for _, pf := range fs {
		load[pf.gpu] += pf.f + pf.b
		if pf.nextGPU >= 0 {
			links[[2]int{pf.gpu, pf.nextGPU}] += pf.cut[0]
			links[[2]int{pf.nextGPU, pf.gpu}] += pf.cut[1]
		}
	}
	T := 0.0
	for _, v := range load {
		T = max(T, v)
	}
	for _, v := range links {
		T = max(T, v)
	}
	return T
}

// MemoryBound returns, per GPU 0..P−1, an upper bound on its peak when plan runs with Actions
// (or the named order) under p: W_g + Σ_{parts k on g} n_k·held_k + max_k (own_k − held_k),
// where n_k = p.InFlight(k, S) is the most micro-batches part k holds in its order (1F1B: its
// warm-up min(m, S−k); GPipe: m), held_k what one of them keeps between its forward and
// backward and own_k the peak of one micro-batch's own operations. While part k runs, every
// other part j on the GPU holds at most n_j micro-batches and part k at most n_k − 1 others,
// so no replay exceeds it; it is the exact peak of a GPU with one part. Sums saturate above
// instances.MaxBytes.
func MemoryBound(p *pl.Problem, plan *schedule.Pipeline) ([]int64, error) {
	fs, err := figures(p, plan)
	if err != nil {
		return nil, err
	}
	return memoryBound(p.GPUs, fs), nil
}

func memoryBound(gpus int, fs []partFigures) []int64 {
	base := make([]int64, gpus)
	extra := make([]int64, gpus)
	for _, pf := range fs {
		h, _ := instances.MulBytes(int64(pf.inFlight), pf.held)
		base[pf.gpu] = satAdd(satAdd(base[pf.gpu], pf.w), h)
		extra[pf.gpu] = max(extra[pf.gpu], pf.own-pf.held)
	}
	out := make([]int64, gpus)
	for g := range out {
		out[g] = satAdd(base[g], extra[g])
	}
	return out
}

func satAdd(a, b int64) int64 {
	if s, ok := instances.SumBytes(a, b); ok {
		return s
	}
	return instances.MaxBytes + 1
}

// Execute completes plan with its per-rank actions (Actions) when it needs them and replays
// it with verify/pipeline under p. The plan's own Actions are kept when present.
func Execute(p *pl.Problem, plan *schedule.Pipeline) (*schedule.Pipeline, *vpl.Result, error) {
	out := plan.Clone()
	if out.Actions == nil {
		as, err := Actions(p, out)
		if err != nil {
			return nil, nil, err
		}
		out.Actions = as
	}
	rep, err := vpl.Replay(p, out)
	if err != nil {
		return nil, nil, fmt.Errorf("pipepack: plan %v does not replay: %w", out, err)
	}
	if math.IsNaN(rep.Makespan) {
		return nil, nil, fmt.Errorf("pipepack: plan %v replays to a NaN makespan", out)
	}
	return out, rep, nil
}

// Enumerate calls visit with every assignment of stages 1..L to at most P GPUs up to the
// GPUs' names (restricted growth strings: stage 1 on GPU 0, a stage on a GPU already used or
// on the next new one), until visit returns false: every allocation, contiguous or not, once.
// There are Σ_{k≤P} S(L, k) of them (Stirling numbers of the second kind): 4 140 for L = 8
// and P = 8. The slice passed to visit is reused.
func Enumerate(L, P int, visit func(gpu []int) bool) {
	gpu := make([]int, L)
	var rec func(i, used int) bool
	rec = func(i, used int) bool {
		if i == L {
			return visit(gpu)
		}
		for g := 0; g <= used && g < P; g++ {
			gpu[i] = g
			nu := used
			if g == used {
				nu++
			}
			if !rec(i+1, nu) {
				return false
			}
		}
		return true
	}
	rec(0, 0)
}
