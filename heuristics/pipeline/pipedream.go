package pipeline

import (
	"errors"
	"math"

	"github.com/memsched/memsched/dp"
	pl "github.com/memsched/memsched/instances/pipeline"
)

// PipeDream returns the allocation PipeDream's planner chooses for a straight pipeline
// (compute_partitioning with --straight_pipeline --use_memory_constraint --use_fewer_machines
// and no activation compression; research/pipeline.md §2.1), or nil when its memory check
// rejects every allocation. Its model, not memsched's:
//
//   - a stage's time is Σ(u_f + u_b) over its layers, transfers ignored (they enter its
//     objective only with an activation compression ratio), and the objective is the largest
//     stage time;
//   - the stage at position s (0-based) of N = P machines stashes N−1−s copies of its layers'
//     activations and parameters and must fit: (Σ ω_a + Σ w)·(N−1−s) ≤ M. The count is one
//     less than what 1F1B holds there (S−s), the last stage is never checked, and the input,
//     gradients and temporaries are not counted;
//   - with use_fewer_machines a prefix may stay on fewer machines when that is not slower.
//
// Layers are the chain's stages 1..L, the loss stage counted with layer L. Ties go as in its
// code: the first split k that is strictly better.
func PipeDream(p *pl.Problem) []int {
	cuts, _ := PipeDreamUntil(p, nil)
	return cuts
}

// ErrStopped says that PipeDreamUntil was stopped before its table was complete.
var ErrStopped = errors.New("pipeline: PipeDream's planner was stopped before its table was complete")

// PipeDreamUntil is PipeDream under poll (nil: never stopped). Its table is O(P·L²) steps
// (14 s on 20 001 stages and 8 GPUs), so poll is read once per row: a stop ends it with
// ErrStopped, never with a half-filled table's split.
func PipeDreamUntil(p *pl.Problem, poll *dp.Poll) ([]int, error) {
	L, N, M := p.L(), p.GPUs, p.Memory
	c := p.Chain
	t := prefixTimes(p)
	act := make([]float64, L+1)
	par := make([]float64, L+1)
	for l := 1; l <= L; l++ {
		act[l] = act[l-1] + float64(c.Stage(l).A)
		par[l] = par[l-1] + float64(c.Stage(l).W)
	}
	par[L] += float64(c.Stage(L + 1).W)
	act[L] += float64(c.Stage(L + 1).A)
	time := func(i, j int) float64 { // layers i..j, 1-based
		if j == L {
			return t[L+1] - t[i-1]
		}
		return t[j] - t[i-1]
	}
	stash := func(i, j, m int) bool { // does stage i..j at position m fit (m+1 machines so far)?
		copies := float64(N - (m + 1))
		return (act[j]-act[i-1]+par[j]-par[i-1])*copies <= float64(M)
	}
	// A[j][m]: the least pipeline time of layers 1..j on m+1 machines, and its split.
	type cell struct {
		v     float64
		split int // the last layer of the previous stages, 0: one stage
		mm    int // machines of the previous stages − 1, when split > 0
		ok    bool
	}
	A := make([][]cell, L+1)
	for j := 1; j <= L; j++ {
		A[j] = make([]cell, N)
		if stash(1, j, 0) {
			A[j][0] = cell{v: time(1, j), ok: true}
		}
	}
	for m := 1; m < N; m++ {
		for j := 1; j <= L; j++ {
			if poll != nil && poll.StoppedNow() {
				return nil, ErrStopped
			}
			best := A[j][m]
			if A[j][m-1].ok && (!best.ok || A[j][m-1].v < best.v) {
				best = A[j][m-1] // use_fewer_machines
			}
			for k := 1; k < j; k++ {
				if !stash(k+1, j, m) || !A[k][m-1].ok {
					continue
				}
				v := math.Max(A[k][m-1].v, time(k+1, j))
				if !best.ok || best.v > v {
					best = cell{v: v, split: k, mm: m - 1, ok: true}
				}
			}
			A[j][m] = best
		}
	}
	top := A[L][N-1]
	if !top.ok {
		return nil, nil
	}
	// Walk the splits back.
	var rev []int
	j, cur := L, top
	for {
		rev = append(rev, j)
		if cur.split == 0 {
			break
		}
		j, cur = cur.split, A[cur.split][cur.mm]
	}
	cuts := make([]int, len(rev))
	for i := range rev {
		cuts[i] = rev[len(rev)-1-i]
	}
	return cuts, nil
}
