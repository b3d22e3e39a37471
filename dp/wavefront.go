package dp

import (
	"sync"
	"sync/atomic"
)

// wavefront calls fill(w, s, t) once for every row 1 ≤ s ≤ t ≤ n of a C_MP-shaped table, on
// workers goroutines (w is the caller's index, for per-worker scratch space), in an order
// where every row (s, t) comes after the rows it reads: (s', t) for s' > s and (s, t') for
// t' < t. Columns t are dealt round-robin to the workers and filled from s = t down to 1; row
// (s, t) waits until column t−1 has finished row s, which by induction means every earlier
// column has. Rows are computed the same way whatever the interleaving, so the table does not
// depend on the number of workers. fill returns false to stop every worker early.
//
// A worker whose row is not ready spins briefly, then sleeps until the row it waits for is
// marked: the machine is shared, and a spinning wait would burn a core that another process
// (or the other worker) could use.
func wavefront(n, workers int, fill func(w, s, t int) bool) {
	workers = max(1, min(workers, n))
	if workers == 1 {
		for t := 1; t <= n; t++ {
			for s := t; s >= 1; s-- {
				if !fill(0, s, t) {
					return
				}
			}
		}
		return
	}
	pr := newProgress(n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for t := 1 + w; t <= n; t += workers {
				for s := t; s >= 1; s-- {
					if s < t && !pr.wait(t-1, s) {
						return
					}
					if !fill(w, s, t) {
						pr.stop()
						return
					}
					pr.mark(t, s)
				}
			}
		}(w)
	}
	wg.Wait()
}

// progress records, per column t, the smallest s whose row (s, t) is filled (t+1: none yet).
type progress struct {
	done    []atomic.Int32
	stopped atomic.Bool
	waiters atomic.Int32
	mu      sync.Mutex
	cond    *sync.Cond
}

func newProgress(n int) *progress {
	p := &progress{done: make([]atomic.Int32, n+1)}
	p.cond = sync.NewCond(&p.mu)
	for t := range p.done {
		p.done[t].Store(int32(t + 1))
	}
	return p
}

// spinWait is how many times wait polls before it sleeps: about a microsecond, less than
// the shortest rows take, so that a worker one row behind never sleeps.
const spinWait = 256

// wait returns once row (s, t) is filled (true), or when the fill was stopped (false).
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
