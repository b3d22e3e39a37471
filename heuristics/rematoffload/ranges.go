package rematoffload

// maxTree is a segment tree over the operations of a sequence: a value per operation, added to
// over ranges, and the last operation of a range whose value exceeds a threshold. It keeps
// Sequence.build's anchor search in O(log L) per prefetch (scanning every anchor and every
// operation after it was cubic: 3 s a schedule on 2001 stages, minutes on 20 001).
type maxTree struct {
	n        int
	max, add []int64 // max of the node's range including its own pending add
}

func newMaxTree(vals []int64) *maxTree {
	n := max(len(vals), 1)
	t := &maxTree{n: n, max: make([]int64, 4*n), add: make([]int64, 4*n)}
	t.build(1, 0, n-1, vals)
	return t
}

func (t *maxTree) build(node, lo, hi int, vals []int64) {
	if lo == hi {
		if lo < len(vals) {
			t.max[node] = vals[lo]
		}
		return
	}
	mid := (lo + hi) / 2
	t.build(2*node, lo, mid, vals)
	t.build(2*node+1, mid+1, hi, vals)
	t.max[node] = max(t.max[2*node], t.max[2*node+1])
}

// rangeAdd adds v to every value in [l, r].
func (t *maxTree) rangeAdd(l, r int, v int64) {
	if l <= r {
		t.update(1, 0, t.n-1, l, r, v)
	}
}

func (t *maxTree) update(node, lo, hi, l, r int, v int64) {
	if r < lo || hi < l {
		return
	}
	if l <= lo && hi <= r {
		t.max[node] += v
		t.add[node] += v
		return
	}
	mid := (lo + hi) / 2
	t.update(2*node, lo, mid, l, r, v)
	t.update(2*node+1, mid+1, hi, l, r, v)
	t.max[node] = max(t.max[2*node], t.max[2*node+1]) + t.add[node]
}

// lastAbove returns the last index in [l, r] whose value exceeds x, or -1.
func (t *maxTree) lastAbove(l, r int, x int64) int {
	if l > r {
		return -1
	}
	return t.find(1, 0, t.n-1, l, r, x)
}

func (t *maxTree) find(node, lo, hi, l, r int, x int64) int {
	if r < lo || hi < l || t.max[node] <= x {
		return -1
	}
	if lo == hi {
		return lo
	}
	// The node's pending add applies to both children: compare them against x less it.
	x -= t.add[node]
	mid := (lo + hi) / 2
	if i := t.find(2*node+1, mid+1, hi, l, r, x); i >= 0 {
		return i
	}
	return t.find(2*node, lo, mid, l, r, x)
}

// sumTree is a Fenwick tree of sizes over the link's transfers: which offloads are away, and
// the first transfer by which the ones away add up to a size.
type sumTree struct{ s []int64 }

func newSumTree(n int) *sumTree { return &sumTree{s: make([]int64, n+1)} }

func (t *sumTree) add(j int, v int64) {
	for i := j + 1; i < len(t.s); i += i & -i {
		t.s[i] += v
	}
}

// firstReaching returns the least j such that the values at 0..j add up to at least need
// (need > 0), or -1 when all of them do not.
func (t *sumTree) firstReaching(need int64) int {
	pos := 0
	step := 1
	for step*2 < len(t.s) {
		step *= 2
	}
	for ; step > 0; step /= 2 {
		if pos+step < len(t.s) && t.s[pos+step] < need {
			pos += step
			need -= t.s[pos]
		}
	}
	if pos >= len(t.s)-1 {
		return -1
	}
	return pos // the prefix 0..pos-1 falls short; with pos it reaches need
}
