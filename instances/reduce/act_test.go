package reduce

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/verify/timed"
)

// hasThreePartition decides 3-Partition by brute force.
func hasThreePartition(us []int64, v int64) bool {
	used := make([]bool, len(us))
	var rec func(left int) bool
	rec = func(left int) bool {
		if left == 0 {
			return true
		}
		a := 0
		for used[a] {
			a++
		}
		used[a] = true
		for b := a + 1; b < len(us); b++ {
			for c := b + 1; c < len(us); c++ {
				if !used[b] && !used[c] && us[a]+us[b]+us[c] == v {
					used[b], used[c] = true, true
					if rec(left - 1) {
						return true
					}
					used[b], used[c] = false, false
				}
			}
		}
		used[a] = false
		return false
	}
	return rec(len(us) / 3)
}

// threePartitionCorpus draws, with a fixed seed, yes-instances (random triples of sum V,
// shuffled, so the triples are not consecutive indices) and no-instances (values in the same
// range whose sum is mV but that brute force cannot split), for m = 2 and 3, every value in
// (V/4, V/2). Without that range the reduction decides "m sets of sum V" of any size: [1 4 3 2
// 8 16] has no triples of sum 17 but {16, 1}, {4, 3, 2, 8}, and the exact search finds 2m.
func threePartitionCorpus() (yes []struct {
	us      []int64
	triples [][3]int
}, no [][]int64) {
	r := rand.New(rand.NewPCG(3, 12))
	// in reports whether u lies strictly between V/4 and V/2 (the strong form of 3-Partition:
	// then every set of sum V has exactly three members).
	in := func(u, v int64) bool { return 4*u > v && 2*u < v }
	draw := func(v int64) int64 { return v/4 + 1 + r.Int64N(v/2-v/4-1) }
	for len(yes) < 12 {
		m := 2 + len(yes)%2
		v := int64(24 + r.IntN(20))
		var us []int64
		for k := 0; k < m; k++ {
			a, b := draw(v), draw(v)
			for !in(v-a-b, v) {
				a, b = draw(v), draw(v)
			}
			us = append(us, a, b, v-a-b)
		}
		perm := r.Perm(len(us))
		shuffled := make([]int64, len(us))
		triples := make([][3]int, m)
		for i, p := range perm {
			shuffled[p] = us[i]
			triples[i/3][i%3] = p
		}
		yes = append(yes, struct {
			us      []int64
			triples [][3]int
		}{shuffled, triples})
	}
	for len(no) < 12 {
		m := 2 + len(no)%2
		v := int64(24 + r.IntN(20))
		us := make([]int64, 3*m)
		var sum int64
		for i := range us[:3*m-1] {
			us[i] = draw(v)
			sum += us[i]
		}
		us[3*m-1] = int64(m)*v - sum
		if !in(us[3*m-1], v) || hasThreePartition(us, v) {
			continue
		}
		no = append(no, us)
	}
	return yes, no
}

// 001 Thm 1 both ways, on 12 yes- and 12 no-instances (m = 2, 3): the certificate of a known
// partition validates with makespan exactly 2m; the exact search reaches 2m on every
// yes-instance and proves that nothing below 2m + 10⁻⁹ exists on every no-instance.
func TestActThreePartition(t *testing.T) {
	if testing.Short() {
		t.Skip("exact search over link orders")
	}
	yes, no := threePartitionCorpus()
	notInOrder := 0
	for _, c := range yes {
		p, target, err := ActThreePartition(c.us)
		require.NoError(t, err)
		cert, err := ActThreePartitionCertificate(c.us, c.triples)
		require.NoError(t, err)
		rep, err := timed.Check(p, cert)
		require.NoError(t, err, "%v %v", c.us, c.triples)
		assert.InDelta(t, target, rep.Makespan, 1e-12)
		if c.triples[0] != [3]int{0, 1, 2} {
			notInOrder++
		}
		start := time.Now()
		e, st, err := hact.Exact(p, hact.ExactOptions{Cutoff: target + 1e-9})
		require.NoError(t, err)
		require.Equal(t, hact.Optimal, st)
		require.True(t, e.Feasible, "yes-instance %v", c.us)
		assert.InDelta(t, target, e.Report.Makespan, 1e-9)
		t.Logf("yes %v: 2m = %g found in %v", c.us, target, time.Since(start))
	}
	assert.GreaterOrEqual(t, notInOrder, 10)
	for _, us := range no {
		p, target, err := ActThreePartition(us)
		require.NoError(t, err)
		start := time.Now()
		e, st, err := hact.Exact(p, hact.ExactOptions{Cutoff: target + 1e-9})
		require.NoError(t, err)
		require.Equal(t, hact.Optimal, st, "no-instance %v", us)
		assert.False(t, e.Feasible, "no-instance %v has a schedule of %g", us, e.Makespan())
		t.Logf("no %v: nothing ≤ 2m = %g, proved in %v", us, target, time.Since(start))
	}
}

// 001 Thm 3: the certificate validates with makespan 2 (its transfers are whole, so it is a
// Problem 1 schedule too); DYNPROG's exact bound is 2 on yes-instances and above 2 on
// no-instances (dp tests more); a wrong half is refused.
func TestActTwoPartition(t *testing.T) {
	us := []int64{3, 1, 1, 2, 2, 1}
	p, target, err := ActTwoPartition(us)
	require.NoError(t, err)
	assert.Equal(t, 2.0, target)
	assert.Equal(t, int64(10), p.MGPU)
	assert.Equal(t, 5.0, p.Beta)
	assert.Equal(t, int64(15), p.Peak())
	for _, half := range [][]int{{0, 3}, {1, 2, 3, 5}, {5, 0, 1}} {
		cert, err := ActTwoPartitionCertificate(us, half)
		require.NoError(t, err)
		rep, err := timed.Check(p, cert)
		require.NoError(t, err, "%v", half)
		assert.InDelta(t, 2.0, rep.Makespan, 1e-12)
	}
	_, err = ActTwoPartitionCertificate(us, []int{0, 1})
	assert.Error(t, err)
	lb, err := dp.InterruptibleBound(p, dp.ActOptions{Exact: true})
	require.NoError(t, err)
	assert.InDelta(t, 2.0, lb, 1e-12)
	pn, _, err := ActTwoPartition([]int64{2, 4})
	require.NoError(t, err)
	lb, err = dp.InterruptibleBound(pn, dp.ActOptions{Exact: true})
	require.NoError(t, err)
	assert.Greater(t, lb, 2.0)
}

func TestActReductionErrors(t *testing.T) {
	_, _, err := ActThreePartition([]int64{1, 2})
	assert.Error(t, err, "not 3m values")
	_, _, err = ActThreePartition([]int64{1, 2, 3, 4, 5, 6})
	assert.Error(t, err, "sum 21 not a multiple of m = 2")
	_, _, err = ActThreePartition([]int64{1, 2, 0})
	assert.Error(t, err, "zero value")
	_, _, err = ActTwoPartition([]int64{1, 2})
	assert.Error(t, err, "odd sum")
	_, err = ActThreePartitionCertificate([]int64{6, 7, 6, 7, 6, 8}, [][3]int{{0, 1, 2}, {3, 4, 5}})
	assert.Error(t, err, "index order is no partition")
	_, _, err = ActThreePartition([]int64{1 << 62, 1 << 62, 1 << 62})
	assert.ErrorContains(t, err, "sum passes 2^60", "a sum that wraps int64")
	_, _, err = ActTwoPartition([]int64{1 << 59, 1 << 59})
	assert.ErrorContains(t, err, "2^60", "sizes total 2V + V > 2^60")
}

func TestWeightsReductionOverflow(t *testing.T) {
	_, _, err := WeightsThreePartition([]int64{1 << 59, 1 << 59, 1 << 59}, nil)
	assert.ErrorContains(t, err, "2^60")
	_, _, err = WeightsThreePartition([]int64{1 << 62, 1 << 62, 1 << 62}, nil)
	assert.ErrorContains(t, err, "sum passes 2^60")
}
