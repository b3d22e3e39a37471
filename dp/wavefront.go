package dp

import (
	"sync"
	"sync/atomic"
)

// wavefront calls fill(w, s, t) once for every row 1 ≤ s ≤ t ≤ n of a C_MP-shaped table, on
// workers goroutines (w is the caller's index, for per-worker scratch space), in an order
// where every row (s, t) comes after the rows it reads: (s', t) for s' > s and (s, t') for
// t' < t. It is blockWavefront with blocks of one column.
func wavefront(n, workers int, fill func(w, s, t int) bool) {
	blockWavefront(n, 1, workers, func(w, s, t0, _ int) bool { return fill(w, s, t0) })
}

// blockWavefront calls fill(w, s, t0, t1) to fill the rows (s, t), max(s, t0) ≤ t < t1, of a
// C_MP-shaped table on 1 ≤ s ≤ t ≤ n, for every block [t0, t1) of width columns and every s
// < t1, in an order where every row (s, t) comes after the rows it reads: (s', t) for s' > s
// and (s, t') for t' < t (fill itself orders the rows of one call, t ascending). Blocks are
// dealt round-robin to workers goroutines (w is the caller's index, for per-worker scratch
// space) and filled from s = t1−1 down to 1; block j's rows at s wait until block j−1 has
// finished its rows at s, which by induction means every earlier block has. Rows are computed
// the same way whatever the interleaving, so the table depends neither on the number of
// workers nor on the width. fill returns false to stop every worker early.
//
// A worker whose rows are not ready spins briefly, then sleeps until the rows it waits for
// are marked: the machine is shared, and a spinning wait would burn a core that another
// process (or the other worker) could use.
func blockWavefront(n, width, workers int, fill func(w, s, t0, t1 int) bool) {
	nb := (n + width - 1) / width
	workers = max(1, min(workers, nb))
	bounds := func(j int) (int, int) { return 1 + j*width, min(1+(j+1)*width, n+1) }
	if workers == 1 {
		for j := 0; j < nb; j++ {
			t0, t1 := bounds(j)
			for s := t1 - 1; s >= 1; s-- {
				if !fill(0, s, t0, t1) {
					return
				}
			}
		}
		return
	}
	// progress is per block; block j's rows start at t1−1 = bounds(j+1)'s t0 − 1, so its
	// "nothing done yet" mark is t1, and a wait on rows s ≥ t1 (which block j has none of)
	// returns at once.
	pr := newProgress(nb, func(j int) int { _, t1 := bounds(j); return t1 })
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := w; j < nb; j += workers {
				t0, t1 := bounds(j)
				for s := t1 - 1; s >= 1; s-- {
					if j > 0 && s < t0 && !pr.wait(j-1, s) {
						return
					}
					if !fill(w, s, t0, t1) {
						pr.stop()
						return
					}
					pr.mark(j, s)
				}
			}
		}(w)
	}
	wg.Wait()
}

// progress records, per block j, the smallest s whose rows are filled (start(j): none yet).
type progress struct {
	done    []atomic.Int32
	stopped atomic.Bool
	waiters atomic.Int32
	mu      sync.Mutex
	cond    *sync.Cond
}

func newProgress(blocks int, start func(j int) int) *progress {
	p := &progress{done: make([]atomic.Int32, blocks)}
	p.cond = sync.NewCond(&p.mu)
	for j := range p.done {
		p.done[j].Store(int32(start(j)))
	}
	return p
}

// spinWait is how many times wait polls before it sleeps: about a microsecond, less than
// the shortest rows take, so that a worker one row behind never sleeps.
const spinWait = 256

// wait returns once block t's rows at s are filled (true), or when the fill was stopped
// (false).
func (p *progress) wait(t, s int) bool {
	for range spinWait {
		if p.done[t].Load() <= int32(s) {
			return true
		}
	}
	// Sequentially consistent atomics: either mark sees waiters > 0 and broadcasts under the
	// lock, or its store of done precedes the load below.
	p.waiters.Add(1)
	p.mu.Lock()
	for p.done[t].Load() > int32(s) && !p.stopped.Load() {
		p.cond.Wait()
	}
	p.mu.Unlock()
	p.waiters.Add(-1)
	return !p.stopped.Load()
}

func (p *progress) mark(t, s int) {
	p.done[t].Store(int32(s))
	if p.waiters.Load() > 0 {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

func (p *progress) stop() {
	p.stopped.Store(true)
	p.mu.Lock()
	p.cond.Broadcast()
	p.mu.Unlock()
}
