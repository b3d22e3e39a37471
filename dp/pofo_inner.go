package dp

import (
	"math"
	"sort"
	"time"

	"github.com/memsched/memsched/schedule"
)

// pofoChain is the chain in units of q bytes (q = 1: exact), every size rounded UP and the
// link's capacity during each operation rounded DOWN, so that whatever fits here fits in bytes
// and moves at least as many bytes (SPEC §6, "sizes rounded so that every schedule stays
// feasible").
type pofoChain struct {
	n          int
	q          int64   // bytes per unit
	perUnit    float64 // seconds to move one unit: q/β
	beta       float64 // units per second
	M          int64   // the budget in units, rounded down
	uf, ub     []float64
	a, abar, d []int64
	of, ob     []int64
	cf, cb     []int64 // units the link moves during F^ℓ and B^ℓ, rounded down
	exactLink  bool    // every β·u is a whole number of units: no rounding of the link
}

// back runs one operation backwards in time (SPEC §6): with q units still to arrive at or
// before its end and room m units beside what the enclosing levels keep, an excess is moved
// during an idle after it, then the link moves cap units during it. ok is false when the
// operation does not fit even with nothing arriving.
func back(need, m, q, cap int64) (idle, out int64, ok bool) {
	if need > m {
		return 0, 0, false
	}
	if ex := need + q - m; ex > 0 {
		idle, q = ex, q-ex
	}
	return idle, max(0, q-cap), true
}

// innerPoint is one Pareto point of a persistent sequence of stages s..t run backwards in
// time from a backlog: its time (computation and idle, seconds) and the backlog it leaves
// (units still to arrive before it starts). choice is 0 for F_all^s first, s' for the split
// F_ck^s … F_∅^{s'-1}; sub holds the indices of the points of the parts it is made of.
type innerPoint struct {
	time   float64
	qout   int64
	choice int32
	sub    [2]int32
}

type innerKey struct {
	s, t  int32
	m, qi int64
}

// inner is rotor's table extended by the backlog: for a sub-chain s..t (its input stored
// outside m, δ^t inside), room m and a backlog qi of units that must arrive during the
// sequence, the Pareto set of (time, leftover backlog) over every persistent sequence
// (004 Thm 4.8's recursion), memoized. Exact, and exponential in the worst case: for small
// chains (SPEC §6, "the inner minimisation … exact").
type inner struct {
	c    *pofoChain
	memo map[innerKey][]innerPoint
	// size counts the points held, limit caps them (0: none); over it, points returns nil
	// and over is set.
	size, limit int
	over        bool
	// deadline (zero: none) and maxBytes (0: none) stop the table as it grows: points
	// then returns nil and sets stopped (the deadline passed) or tooBig (its estimated
	// memory, innerBytes, passed maxBytes). Either ends the search with an error: the
	// entries filled after it are incomplete.
	deadline        time.Time
	maxBytes        int64
	stopped, tooBig bool
}

// innerEntryBytes and innerPointBytes estimate the memory of one memoized entry of inner (its
// key, slice header and the map's share) and of one point.
const (
	innerEntryBytes = 96
	innerPointBytes = 32
)

// innerBytes is the estimated memory of in's table.
func (in *inner) innerBytes() int64 {
	return int64(len(in.memo))*innerEntryBytes + int64(in.size)*innerPointBytes
}

// innerCheckEvery is how many new entries inner fills between two looks at the clock and the
// memory (a few milliseconds of work).
const innerCheckEvery = 1 << 12

func newInner(c *pofoChain, limit int) *inner {
	return &inner{c: c, memo: map[innerKey][]innerPoint{}, limit: limit}
}

// innerPareto sorts points by time and keeps those that leave strictly less backlog.
func innerPareto(pts []innerPoint) []innerPoint {
	sort.SliceStable(pts, func(i, j int) bool {
		if pts[i].time != pts[j].time {
			return pts[i].time < pts[j].time
		}
		return pts[i].qout < pts[j].qout
	})
	out := pts[:0]
	for _, p := range pts {
		if len(out) == 0 || p.qout < out[len(out)-1].qout {
			out = append(out, p)
		}
	}
	return out
}

// fwdBack runs the forward steps F_ck^s F_∅^{s+1} … F_∅^{s2-1} of a split backwards in time.
func (in *inner) fwdBack(s, s2, t int, m, q int64) (idle, out int64, ok bool) {
	c := in.c
	for j := s2 - 1; j >= s; j-- {
		need := c.d[t] + c.a[j] + c.of[j]
		if j > s {
			need += c.a[j-1]
		}
		i, o, fits := back(need, m, q, c.cf[j])
		if !fits {
			return 0, 0, false
		}
		idle += i
		q = o
	}
	return idle, q, true
}

// points returns the Pareto set for (s, t, m, qi).
func (in *inner) points(s, t int, m, qi int64) []innerPoint {
	if m < 0 || in.over || in.stopped || in.tooBig {
		return nil
	}
	key := innerKey{int32(s), int32(t), m, qi}
	if v, ok := in.memo[key]; ok {
		return v
	}
	c := in.c
	var pts []innerPoint
	fAll := c.d[t] + c.abar[s] + c.of[s]
	bNeed := c.d[s] + c.abar[s] + c.d[s-1] + c.ob[s]
	if i1, q1, ok := back(bNeed, m, qi, c.cb[s]); ok {
		if s == t {
			if i2, q2, ok := back(fAll, m, q1, c.cf[s]); ok {
				pts = append(pts, innerPoint{time: c.uf[s] + c.ub[s] + float64(i1+i2)*c.perUnit, qout: q2})
			}
		} else {
			for k, p := range in.points(s+1, t, m-c.abar[s], q1) {
				if i2, q2, ok := back(fAll, m, p.qout, c.cf[s]); ok {
					pts = append(pts, innerPoint{time: c.uf[s] + c.ub[s] + p.time + float64(i1+i2)*c.perUnit, qout: q2,
						sub: [2]int32{int32(k), -1}})
				}
			}
		}
	}
	pre := 0.0
	for s2 := s + 1; s2 <= t; s2++ {
		pre += c.uf[s2-1]
		for k1, p1 := range in.points(s, s2-1, m, qi) {
			for k2, p2 := range in.points(s2, t, m-c.a[s2-1], p1.qout) {
				if i3, q3, ok := in.fwdBack(s, s2, t, m, p2.qout); ok {
					pts = append(pts, innerPoint{time: pre + p1.time + p2.time + float64(i3)*c.perUnit, qout: q3,
						choice: int32(s2), sub: [2]int32{int32(k1), int32(k2)}})
				}
			}
		}
	}
	pts = innerPareto(pts)
	in.size += len(pts)
	if in.limit > 0 && in.size > in.limit {
		in.over = true
	}
	in.memo[key] = pts
	if len(in.memo)%innerCheckEvery == 0 {
		in.stopped = passed(in.deadline)
		in.tooBig = in.maxBytes > 0 && in.innerBytes() > in.maxBytes
	}
	return pts
}

// appendSeq appends the sequence of point k of (s, t, m, qi).
func (in *inner) appendSeq(seq *schedule.Sequence, s, t int, m, qi int64, k int) {
	c := in.c
	p := in.points(s, t, m, qi)[k]
	if p.choice == 0 {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fall, Stage: s})
		if s < t {
			_, q1, _ := back(c.d[s]+c.abar[s]+c.d[s-1]+c.ob[s], m, qi, c.cb[s])
			in.appendSeq(seq, s+1, t, m-c.abar[s], q1, int(p.sub[0]))
		}
		*seq = append(*seq, schedule.Op{Kind: schedule.B, Stage: s})
		return
	}
	s2 := int(p.choice)
	*seq = append(*seq, schedule.Op{Kind: schedule.Fck, Stage: s})
	for j := s + 1; j < s2; j++ {
		*seq = append(*seq, schedule.Op{Kind: schedule.Fn, Stage: j})
	}
	p1 := in.points(s, s2-1, m, qi)[p.sub[0]]
	in.appendSeq(seq, s2, t, m-c.a[s2-1], p1.qout, int(p.sub[1]))
	in.appendSeq(seq, s, s2-1, m, qi, int(p.sub[0]))
}

// persistentTable gives C_MP(s, t, m) — the best persistent sequence of stages s..t with its
// input stored outside m units and δ^t inside, no backlog — and its sequence: the slotted
// rotor table (Persistent), or inner with no backlog for exact units.
type persistentTable interface {
	value(s, t int, m int64) float64
	appendSeq(seq *schedule.Sequence, s, t int, m int64)
}

// innerTable is persistentTable over inner with no backlog (exact mode).
type innerTable struct{ in *inner }

func (t innerTable) value(s, e int, m int64) float64 {
	pts := t.in.points(s, e, m, 0)
	if len(pts) == 0 {
		return math.Inf(1)
	}
	return pts[0].time
}

func (t innerTable) appendSeq(seq *schedule.Sequence, s, e int, m int64) {
	t.in.appendSeq(seq, s, e, m, 0, 0)
}
