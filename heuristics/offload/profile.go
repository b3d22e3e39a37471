package offload

import (
	"math"
	"sort"
)

// memProfile is the GPU memory used over time by the items Alg. 2 has placed so far: v[k] bytes
// on [t[k], t[k+1]), the last value to +∞. Items are placed in Alg. 2's order and never move,
// so a later item must fit in what the earlier ones left (002 §5: an operation waits until it is
// "feasible").
type memProfile struct {
	t []float64
	v []int64
}

func newProfile(v0 int64) *memProfile { return &memProfile{t: []float64{0}, v: []int64{v0}} }

// at returns the index of a segment starting exactly at x, splitting one if needed (x ≥ 0).
func (m *memProfile) at(x float64) int {
	k := sort.SearchFloat64s(m.t, x)
	if k < len(m.t) && m.t[k] == x {
		return k
	}
	m.t = append(m.t, 0)
	m.v = append(m.v, 0)
	copy(m.t[k+1:], m.t[k:])
	copy(m.v[k+1:], m.v[k:])
	m.t[k], m.v[k] = x, m.v[k-1]
	return k
}

// add adds dx bytes on [t0, t1) (t1 may be +Inf).
func (m *memProfile) add(t0, t1 float64, dx int64) {
	if dx == 0 || t1 <= t0 {
		return
	}
	k0 := m.at(t0)
	k1 := len(m.t)
	if !math.IsInf(t1, 1) {
		k1 = m.at(t1)
	}
	for k := k0; k < k1; k++ {
		m.v[k] += dx
	}
}

// seg returns the index of the segment containing x ≥ 0: the last k with t[k] ≤ x.
func (m *memProfile) seg(x float64) int {
	k := sort.SearchFloat64s(m.t, x)
	if k < len(m.t) && m.t[k] == x {
		return k
	}
	return k - 1
}

// earliest returns the earliest t ≥ t0 at which an item using d1 bytes on [t, t+u) and d2
// bytes on [t+u, ∞) fits under limit (u = +Inf: d1 for ever), or +Inf if no such t exists.
func (m *memProfile) earliest(t0, u float64, d1, d2 int64, limit int64) float64 {
	n := len(m.t)
	t := t0
	if !math.IsInf(u, 1) {
		// The tail: every segment meeting [t+u, ∞) must hold d2 more.
		last := -1
		for k := n - 1; k >= 0; k-- {
			if m.v[k]+d2 > limit {
				last = k
				break
			}
		}
		if last == n-1 {
			return math.Inf(1)
		}
		if last >= 0 {
			t = max(t, m.t[last+1]-u)
		}
	}
	for {
		// Segments meeting the window [t, t+u): from the one containing t to the last starting
		// before t+u; move past the last one that is too full.
		k0 := m.seg(t)
		bad := -1
		for k := k0; k < n && (k == k0 || m.t[k] < t+u); k++ {
			if m.v[k]+d1 > limit {
				bad = k
			}
		}
		if bad < 0 {
			return t
		}
		if bad == n-1 {
			return math.Inf(1)
		}
		t = m.t[bad+1]
	}
}
