package dp

import (
	"cmp"
	"math"
	"slices"
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

// maxCapPoints bounds a wholeCap's Pareto set (and an abarKnapsack's); past it adjacent
// points are merged into (earlier finish, more bytes), which keeps it an upper bound.
const maxCapPoints = 1 << 12

// capPoints halves a Pareto set given as parallel slices, both increasing (key, value), while
// it has more than maxCapPoints points: each pair of adjacent points becomes one, the first's
// key with the second's value — a point at least as good as both, so the set only overstates
// what each key can reach (wholeCap: bytes by a finish time; abarKnapsack: u_f within a size).
// It works in place and returns the shortened slices.
func capPoints[K, V any](keys []K, vals []V) ([]K, []V) {
	for len(keys) > maxCapPoints {
		m := 0
		for i := 0; i < len(keys); i += 2 {
			keys[m], vals[m] = keys[i], vals[min(i+1, len(keys)-1)]
			m++
		}
		keys, vals = keys[:m], vals[:m]
	}
	return keys, vals
}

// newWholeCap builds the Pareto set of jobs (any order; sorted by release here).
func newWholeCap(jobs []capJob, beta float64) wholeCap {
	js := append([]capJob(nil), jobs...)
	sort.SliceStable(js, func(a, b int) bool { return js[a].release < js[b].release })
	w := wholeCap{finish: []float64{0}, bytes: []int64{0}}
	for _, j := range js {
		w = w.then(j, beta)
	}
	return w
}

// wholeCapPrefixes returns the Pareto sets of jobs[:1], jobs[:2], …, jobs[:len(jobs)] for jobs
// already in release order: each extends the one before by a job (then), exactly as
// newWholeCap builds it job by job, so that n sets cost n steps rather than n²/2. Stop is read
// between jobs (on DenseNet-201 the sets over ~100 tensors take most of a second); stopped,
// it returns ok = false and sets it has not built.
func wholeCapPrefixes(jobs []capJob, beta float64, stop <-chan struct{}) (out []wholeCap, ok bool) {
	out = make([]wholeCap, len(jobs))
	w := wholeCap{finish: []float64{0}, bytes: []int64{0}}
	inOrder := true
	for i, j := range jobs {
		if stopped(stop) {
			return out, false
		}
		if inOrder = inOrder && (i == 0 || j.release >= jobs[i-1].release); !inOrder {
			// No longer prefixes of one order (times are validated ≥ 0: the caller's never are).
			out[i] = newWholeCap(jobs[:i+1], beta)
			continue
		}
		w = w.then(j, beta)
		out[i] = w
	}
	return out, true
}

// then is w extended by job j, released no earlier than w's jobs: each point either skips j
// or runs it after the point's finish and j's release, in one of its sizes. It returns new
// slices (w is left as it is).
func (w wholeCap) then(j capJob, beta float64) wholeCap {
	type pt struct {
		f float64
		b int64
	}
	all := make([]pt, 0, len(w.finish)*(1+len(j.sizes)))
	for i := range w.finish {
		all = append(all, pt{w.finish[i], w.bytes[i]})
		for _, s := range j.sizes {
			if s <= 0 {
				continue
			}
			all = append(all, pt{math.Max(w.finish[i], j.release) + float64(s)/beta, w.bytes[i] + s})
		}
	}
	slices.SortFunc(all, func(a, b pt) int {
		if c := cmp.Compare(a.f, b.f); c != 0 {
			return c
		}
		return cmp.Compare(b.b, a.b)
	})
	out := wholeCap{finish: make([]float64, 0, len(all)), bytes: make([]int64, 0, len(all))}
	for _, p := range all {
		if len(out.bytes) > 0 && p.b <= out.bytes[len(out.bytes)-1] {
			continue
		}
		out.finish, out.bytes = append(out.finish, p.f), append(out.bytes, p.b)
	}
	out.finish, out.bytes = capPoints(out.finish, out.bytes)
	return out
}

// at is the most bytes moved by time t.
func (w wholeCap) at(t float64) int64 {
	i := sort.Search(len(w.finish), func(i int) bool { return w.finish[i] > t*(1+1e-12) }) - 1
	if i < 0 {
		return 0
	}
	return w.bytes[i]
}
