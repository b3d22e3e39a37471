package dp

import (
	"math"
	"sort"
)

// capJob is one stage's tensor for wholeCap: available from release (seconds), moved whole in
// one of sizes (a^j or ā^j: at most one of them is stored at a time).
type capJob struct {
	release float64
	sizes   []int64
}

// wholeCap is the most bytes of whole tensors one link of bandwidth β can move by a time t,
// each tensor once its job is released, at most one size per job: the Pareto set of (finish
// time, bytes) over subsets run in release order (for a common due time, running a subset in
// release order finishes no later than any other order). finish increases and bytes
// increase strictly along it.
type wholeCap struct {
	finish []float64
	bytes  []int64
}

// maxCapPoints bounds a wholeCap's Pareto set; past it adjacent points are merged into
// (earlier finish, more bytes), which keeps it an upper bound.
const maxCapPoints = 1 << 12

// newWholeCap builds the Pareto set of jobs (any order; sorted by release here).
func newWholeCap(jobs []capJob, beta float64) wholeCap {
	js := append([]capJob(nil), jobs...)
	sort.SliceStable(js, func(a, b int) bool { return js[a].release < js[b].release })
	w := wholeCap{finish: []float64{0}, bytes: []int64{0}}
	type pt struct {
		f float64
		b int64
	}
	var all []pt
	for _, j := range js {
		all = all[:0]
		for i := range w.finish {
			all = append(all, pt{w.finish[i], w.bytes[i]})
			for _, s := range j.sizes {
				if s <= 0 {
					continue
				}
				all = append(all, pt{math.Max(w.finish[i], j.release) + float64(s)/beta, w.bytes[i] + s})
			}
		}
		sort.Slice(all, func(a, b int) bool {
			if all[a].f != all[b].f {
				return all[a].f < all[b].f
			}
			return all[a].b > all[b].b
		})
		w.finish, w.bytes = w.finish[:0], w.bytes[:0]
		for _, p := range all {
			if len(w.bytes) > 0 && p.b <= w.bytes[len(w.bytes)-1] {
				continue
			}
			w.finish, w.bytes = append(w.finish, p.f), append(w.bytes, p.b)
		}
		for len(w.finish) > maxCapPoints {
			// Merge pairs: (the earlier finish, the larger bytes) bounds both from above.
			k := 0
			for i := 0; i < len(w.finish); i += 2 {
				j := min(i+1, len(w.finish)-1)
				w.finish[k], w.bytes[k] = w.finish[i], w.bytes[j]
				k++
			}
			w.finish, w.bytes = w.finish[:k], w.bytes[:k]
		}
	}
	return w
}

// at is the most bytes moved by time t.
func (w wholeCap) at(t float64) int64 {
	i := sort.Search(len(w.finish), func(i int) bool { return w.finish[i] > t*(1+1e-12) }) - 1
	if i < 0 {
		return 0
	}
	return w.bytes[i]
}
