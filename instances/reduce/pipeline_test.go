package reduce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp/pipepack"
	pl "github.com/memsched/memsched/instances/pipeline"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// splits decides by brute force whether us splits into parts sets of equal sum (any sizes):
// the question P‖Cmax asks of the period (every GPU at most Σ/parts).
func splits(us []int64, parts int) bool {
	var sum int64
	for _, u := range us {
		sum += u
	}
	if sum%int64(parts) != 0 {
		return false
	}
	v := sum / int64(parts)
	load := make([]int64, parts)
	var rec func(i int) bool
	rec = func(i int) bool {
		if i == len(us) {
			return true
		}
		seen := map[int64]bool{}
		for g := range load {
			if seen[load[g]] || load[g]+us[i] > v {
				continue
			}
			seen[load[g]] = true
			load[g] += us[i]
			if rec(i + 1) {
				return true
			}
			load[g] -= us[i]
		}
		return false
	}
	return rec(0)
}

// SubsetHalf decides 2-Partition by enumerating the subsets. Exported from this test file for
// the external tests of the package (remat2p_test.go) too.
func SubsetHalf(xs []int64) bool {
	var sum int64
	for _, x := range xs {
		sum += x
	}
	for mask := 0; mask < 1<<len(xs); mask++ {
		var s int64
		for i, x := range xs {
			if mask>>i&1 == 1 {
				s += x
			}
		}
		if 2*s == sum {
			return true
		}
	}
	return false
}

// pipelineCorpus draws, with a fixed seed, 24 yes- and 24 no-instances of 3-Partition in the
// strong form (every value strictly between V/4 and V/2; q = 2, 3, 4; V in 24..43; yes:
// random triples of sum V, shuffled; no: values in the same range summing to qV that brute
// force cannot split), and 24 yes- and 24 no-instances of 2-Partition (4–10 values in 1..30,
// even sum), each decided by brute force (hasThreePartition, splits, SubsetHalf).
func pipelineCorpus(t *testing.T) (yes3, no3, yes2, no2 [][]int64) {
	r := rand.New(rand.NewPCG(7, 30))
	in := func(u, v int64) bool { return 4*u > v && 2*u < v }
	draw := func(v int64) int64 { return v/4 + 1 + r.Int64N(v/2-v/4-1) }
	for len(yes3) < 24 {
		q := 2 + len(yes3)%3
		v := int64(24 + r.IntN(20))
		var us []int64
		for range q {
			a, b := draw(v), draw(v)
			for !in(v-a-b, v) {
				a, b = draw(v), draw(v)
			}
			us = append(us, a, b, v-a-b)
		}
		r.Shuffle(len(us), func(i, j int) { us[i], us[j] = us[j], us[i] })
		require.True(t, hasThreePartition(us, v))
		require.True(t, splits(us, q))
		yes3 = append(yes3, us)
	}
	for len(no3) < 24 {
		q := 2 + len(no3)%3
		v := int64(24 + r.IntN(20))
		us := make([]int64, 3*q)
		var sum int64
		for i := range us[:3*q-1] {
			us[i] = draw(v)
			sum += us[i]
		}
		us[3*q-1] = int64(q)*v - sum
		if !in(us[3*q-1], v) || hasThreePartition(us, v) {
			continue
		}
		require.False(t, splits(us, q), "%v: strong form, no triples, but sets of sum V", us)
		no3 = append(no3, us)
	}
	for len(yes2) < 24 || len(no2) < 24 {
		us := make([]int64, 4+r.IntN(7))
		var sum int64
		for i := range us {
			us[i] = 1 + r.Int64N(30)
			sum += us[i]
		}
		if sum%2 == 1 {
			us[0]++
		}
		ok := SubsetHalf(us)
		require.Equal(t, ok, splits(us, 2))
		if ok && len(yes2) < 24 {
			yes2 = append(yes2, us)
		} else if !ok && len(no2) < 24 {
			no2 = append(no2, us)
		}
	}
	return yes3, no3, yes2, no2
}

// TestPipelinePartitionDecidedByPack: the packing DP decides all 96 instances of the corpus
// (24 yes and 24 no of each reduction): its proven optimal period is exactly V on every
// yes-instance and above V (at least V+1, the data being integers) on every no-instance; on
// the yes-instances its allocation, run in the modulo order of period V with m = 12
// micro-batches, replays to a makespan between 12V and the order's latency + 11V — the
// period V is reached, not only bounded.
func TestPipelinePartitionDecidedByPack(t *testing.T) {
	yes3, no3, yes2, no2 := pipelineCorpus(t)
	for _, tc := range []struct {
		name string
		set  [][]int64
		yes  bool
		make func([]int64, int) (*pl.Problem, float64, error)
	}{{"3-partition yes", yes3, true, PipelineThreePartition}, {"3-partition no", no3, false, PipelineThreePartition},
		{"2-partition yes", yes2, true, PipelineTwoPartition}, {"2-partition no", no2, false, PipelineTwoPartition}} {
		for i, us := range tc.set {
			p, v, err := tc.make(us, 12)
			require.NoError(t, err)
			res, err := pipepack.Pack(p, pipepack.Options{})
			require.NoError(t, err)
			require.True(t, res.Optimal, "%s %d", tc.name, i)
			require.True(t, res.Feasible, "%s %d", tc.name, i)
			if !tc.yes {
				assert.GreaterOrEqual(t, res.Objective, v+1, "%s %d %v: period %g", tc.name, i, us, res.Objective)
				continue
			}
			assert.Equal(t, v, res.Objective, "%s %d %v", tc.name, i, us)
			assert.Equal(t, v, res.Period, "%s %d", tc.name, i)
			bare := res.Plan.Clone()
			bare.Actions = nil
			as, err := pipepack.Modulo(p, bare, v)
			require.NoError(t, err)
			bare.Actions = as
			rep, err := vpl.Replay(p, bare)
			require.NoError(t, err)
			lat, err := pipepack.ModuloLatency(p, bare, v)
			require.NoError(t, err)
			m := float64(p.MicroBatches)
			assert.GreaterOrEqual(t, rep.Makespan, m*v, "%s %d", tc.name, i)
			assert.LessOrEqual(t, rep.Makespan, lat+(m-1)*v, "%s %d", tc.name, i)
			assert.True(t, rep.Fits())
		}
	}
}

// TestPipelineReductionShape: the instance as SPEC §7 states it — 3q stages with the values
// as layer times, q GPUs, free links, a memory every allocation fits — and bad values refused.
func TestPipelineReductionShape(t *testing.T) {
	p, v, err := PipelineThreePartition([]int64{4, 5, 6, 4, 5, 6}, 3)
	require.NoError(t, err)
	assert.Equal(t, 15.0, v)
	assert.Equal(t, 2, p.GPUs)
	assert.Equal(t, 6, p.L())
	assert.True(t, math.IsInf(p.Bandwidth, 1))
	assert.Equal(t, int64(2*6*3+6+3), p.Memory)
	for l := 1; l <= 6; l++ {
		assert.Equal(t, []float64{4, 5, 6, 4, 5, 6}[l-1], p.Chain.Stage(l).UF+p.Chain.Stage(l).UB)
	}
	// Every allocation fits (the memory never binds): the worst, every stage its own part on
	// one GPU... which is one part; stages alternating over two GPUs with m = 3.
	for _, gpu := range [][]int{{0, 1, 0, 1, 0, 1}, {0, 0, 0, 0, 0, 0}, {0, 1, 1, 0, 0, 1}} {
		mb, err := pipepack.MemoryBound(p, pipepack.Alloc(gpu))
		require.NoError(t, err)
		for _, b := range mb {
			assert.LessOrEqual(t, b, p.Memory)
		}
	}
	p2, v2, err := PipelineTwoPartition([]int64{3, 1, 1, 2, 2, 1}, 1)
	require.NoError(t, err)
	assert.Equal(t, 5.0, v2)
	assert.Equal(t, 2, p2.GPUs)
	for _, bad := range []struct {
		us   []int64
		want string
	}{{[]int64{1, 2}, "3q values"}, {[]int64{1, 2, 4}, "not a multiple of 1"}, {nil, "3q values"}, {[]int64{1, 1, -2}, "must be positive"},
		{[]int64{1, 2, 3, 4, 5, 1<<54 + 1}, "above 2^53"}} {
		_, _, err := PipelineThreePartition(bad.us, 1)
		if bad.want == "not a multiple of 1" {
			assert.NoError(t, err) // any sum divides into q = 1 set
			continue
		}
		assert.ErrorContains(t, err, bad.want, "%v", bad.us)
	}
	_, _, err = PipelineTwoPartition([]int64{1, 2}, 1)
	assert.ErrorContains(t, err, "not a multiple of 2")
	_, _, err = PipelineTwoPartition([]int64{3}, 1)
	assert.ErrorContains(t, err, "at least 2 values")
	_, _, err = PipelineTwoPartition([]int64{1, 1}, 0)
	assert.ErrorContains(t, err, "micro-batches")
}
