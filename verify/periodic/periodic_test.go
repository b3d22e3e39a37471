package periodic_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// threePartitions are yes-instances of 3-partition with a known solution.
var threePartitions = []struct {
	xs     []int64
	groups [][]int
}{
	{[]int64{3, 3, 4}, [][]int{{0, 1, 2}}},
	{[]int64{4, 5, 6, 4, 5, 6}, [][]int{{0, 1, 2}, {3, 4, 5}}},
	{[]int64{5, 6, 9, 6, 7, 7, 8, 6, 6}, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
	{[]int64{26, 26, 28, 27, 27, 26, 30, 25, 25, 28, 26, 26}, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}}},
}

// TestThreePartitionCertificate: 002 Thm 1's certificate schedule validates with period exactly
// 2m and no idle time (the acceptance for the reduction).
func TestThreePartitionCertificate(t *testing.T) {
	for _, tp := range threePartitions {
		p, s, err := reduce.WeightsThreePartition(tp.xs, tp.groups)
		require.NoError(t, err)
		m := len(tp.xs) / 3
		rep, err := periodic.Validate(p, s)
		require.NoError(t, err, "m=%d", m)
		assert.Equal(t, float64(2*m), rep.Period)
		assert.InDelta(t, 0, rep.Idle, 1e-12)
		assert.Equal(t, p.MGPU, rep.Peak, "the certificate uses the whole memory")
		var sum int64
		for _, x := range tp.xs {
			sum += x
		}
		v := sum / int64(m)
		assert.Equal(t, sum+int64(m)*v, rep.Offloaded, "every x-layer and every w_{2k-1} leaves once")
		assert.Equal(t, rep.Offloaded, rep.Prefetched)
	}
}

// TestBrokenSchedulesAreRejected: each change to a valid certificate breaks one rule, and the
// validator names it.
func TestBrokenSchedulesAreRejected(t *testing.T) {
	tp := threePartitions[2]
	base := func() (*offload.Problem, *schedule.Periodic) {
		p, s, err := reduce.WeightsThreePartition(tp.xs, tp.groups)
		require.NoError(t, err)
		return p, s
	}
	cases := []struct {
		name   string
		break_ func(p *offload.Problem, s *schedule.Periodic)
		want   string
	}{
		{"one byte less memory", func(p *offload.Problem, s *schedule.Periodic) { p.MGPU-- }, "exceeds M_GPU"},
		{"prefetch too late", func(p *offload.Problem, s *schedule.Periodic) {
			for k := range s.Transfers {
				if s.Transfers[k].Kind == schedule.Prefetch && s.Transfers[k].Layer == 1 {
					s.Transfers[k].Start += 0.5
				}
			}
		}, "overlap"}, // it now wraps around onto the next prefetch
		{"shorter period", func(p *offload.Problem, s *schedule.Periodic) { s.Period -= 0.5 }, "does not fit"},
		{"operations out of order", func(p *offload.Problem, s *schedule.Periodic) { s.OpStart[len(s.OpStart)-1] = 0 }, "starts before"},
		{"missing offload", func(p *offload.Problem, s *schedule.Periodic) {
			s.Transfers = s.Transfers[1:] // w_1 stays: no room for the prefetched triple
		}, "exceeds M_GPU"},
		{"weights missing at their forward", func(p *offload.Problem, s *schedule.Periodic) {
			s.Resident[2*3+1] = true // claims an x-layer starts on the GPU, without its transfers
			s.Transfers = s.Transfers[:0]
			p.MGPU *= 10
		}, "needs w_"},
		{"channel overlap", func(p *offload.Problem, s *schedule.Periodic) {
			s.Transfers = append(s.Transfers, schedule.Transfer{Layer: 2, Kind: schedule.Upload, Start: 0.5})
			p.Layers[1].W = 1
		}, "overlap"},
		{"delete without a CPU copy", func(p *offload.Problem, s *schedule.Periodic) {
			s.Deletes = append(s.Deletes, schedule.Delete{Layer: 3, Time: 0})
		}, "without a current copy"},
		{"stale prefetch", func(p *offload.Problem, s *schedule.Periodic) {
			s.CPUValid[len(s.CPUValid)-1] = false
		}, "prefetch of w_15 without a current copy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, s := base()
			c.break_(p, s)
			_, err := periodic.Validate(p, s)
			var pe *periodic.Error
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, pe.Msg, c.want)
		})
	}
}

// TestPeriodMustClose: one layer whose CPU copy is current at the start; B_1 updates the
// weights and nothing uploads them, so the state at the end differs — rejected. Uploading
// after B_1 closes the period.
func TestPeriodMustClose(t *testing.T) {
	p := &offload.Problem{Layers: []offload.Layer{{UF: 1, UB: 2, W: 4, A: 1}}, MGPU: 100, Beta: 4}
	s := &schedule.Periodic{Period: 4, OpStart: []float64{0, 1}, Resident: []bool{false, true}, CPUValid: []bool{false, true}}
	_, err := periodic.Validate(p, s)
	assert.ErrorContains(t, err, "does not close")
	s.Transfers = []schedule.Transfer{{Layer: 1, Kind: schedule.Upload, Start: 3}}
	rep, err := periodic.Validate(p, s)
	require.NoError(t, err)
	assert.Equal(t, 1.0, rep.Idle)
	assert.Equal(t, int64(2*4+1), rep.Peak, "M_{B_1} = 2|w_1| + |a^1| (w_1 and δw_1)")
	s.Transfers[0].Start = 1.5 // during B_1
	_, err = periodic.Validate(p, s)
	assert.ErrorContains(t, err, "during B_1")
}

// TestWrappedTransfers: a transfer that ends after the period is, in the steady state, in
// flight at time 0; it holds its channel and buffer there and its effect lands when it ends.
func TestWrappedTransfers(t *testing.T) {
	one := []offload.Layer{{UF: 1, UB: 2, W: 4, A: 1}} // |w_1|/β = 1
	t.Run("upload wraps and closes the period", func(t *testing.T) {
		p := &offload.Problem{Layers: one, MGPU: 100, Beta: 4}
		s := &schedule.Periodic{Period: 4, OpStart: []float64{0, 1}, Resident: []bool{false, true}, CPUValid: []bool{false, false},
			Transfers: []schedule.Transfer{{Layer: 1, Kind: schedule.Upload, Start: 3.5}}}
		rep, err := periodic.Validate(p, s)
		require.NoError(t, err)
		assert.Equal(t, int64(4), rep.Offloaded)
		s.CPUValid[1] = true // the copy becomes current only when the wrapped upload ends
		_, err = periodic.Validate(p, s)
		assert.ErrorContains(t, err, "does not close")
	})
	t.Run("wrapped upload overlaps B_1", func(t *testing.T) {
		p := &offload.Problem{Layers: []offload.Layer{{UF: 1, UB: 2, W: 8, A: 1}}, MGPU: 100, Beta: 4}
		s := &schedule.Periodic{Period: 4, OpStart: []float64{0, 1}, Resident: []bool{false, true}, CPUValid: []bool{false, false},
			Transfers: []schedule.Transfer{{Layer: 1, Kind: schedule.Upload, Start: 3.5}}}
		_, err := periodic.Validate(p, s)
		assert.ErrorContains(t, err, "B_1 runs while w_1 is being sent")
	})
	t.Run("longer than a period", func(t *testing.T) {
		p := &offload.Problem{Layers: []offload.Layer{{UF: 1, UB: 2, W: 20, A: 1}}, MGPU: 100, Beta: 4}
		s := &schedule.Periodic{Period: 4, OpStart: []float64{0, 1}, Resident: []bool{false, true}, CPUValid: []bool{false, false},
			Transfers: []schedule.Transfer{{Layer: 1, Kind: schedule.Upload, Start: 3}}}
		_, err := periodic.Validate(p, s)
		assert.ErrorContains(t, err, "does not fit in a period")
	})
	// w_1 leaves after B_1 and comes back across the period boundary: F_1 waits for it.
	prefetch := func(mgpu int64, resident bool, f1 float64) (*offload.Problem, *schedule.Periodic) {
		p := &offload.Problem{Layers: one, MGPU: mgpu, Beta: 4}
		s := &schedule.Periodic{Period: 5, OpStart: []float64{f1, 1.5}, Resident: []bool{false, resident}, CPUValid: []bool{false, true},
			Transfers: []schedule.Transfer{{Layer: 1, Kind: schedule.Offload, Start: 3.5}, {Layer: 1, Kind: schedule.Prefetch, Start: 4.5}}}
		return p, s
	}
	t.Run("prefetch wraps", func(t *testing.T) {
		p, s := prefetch(9, false, 0.5)
		rep, err := periodic.Validate(p, s)
		require.NoError(t, err)
		assert.Equal(t, int64(9), rep.Peak, "B_1: w_1, δw_1, a^1")
		assert.Equal(t, 2.0, rep.Idle)
	})
	t.Run("wrapped prefetch not done before F_1", func(t *testing.T) {
		p, s := prefetch(9, false, 0.25)
		_, err := periodic.Validate(p, s)
		assert.ErrorContains(t, err, "needs w_1")
	})
	t.Run("wrapped prefetch of a resident weight", func(t *testing.T) {
		p, s := prefetch(9, true, 0.5)
		_, err := periodic.Validate(p, s)
		assert.ErrorContains(t, err, "both on the GPU and being prefetched")
	})
	t.Run("wrapped prefetch holds its buffer at 0", func(t *testing.T) {
		p, s := prefetch(9, false, 0.5)
		s.Transfers = append(s.Transfers, schedule.Transfer{Layer: 1, Kind: schedule.Upload, Start: 0.5}) // keeps the buffer busy
		p.MGPU = 8
		_, err := periodic.Validate(p, s)
		assert.ErrorContains(t, err, "exceeds M_GPU")
	})
}

// TestActivationsBetweenOperations: after B_2 only a^1 stays (B_2 consumed a^2 and its gradient
// buffer is gone), so w_2 still leaving and w_1 arriving fit in the gap before B_1:
// 4 + 4 + |a^1| = 9 ≤ 11, where counting the smaller neighbour's need (B_1: 5) would give 13.
func TestActivationsBetweenOperations(t *testing.T) {
	p := &offload.Problem{Layers: []offload.Layer{{UF: 1, UB: 1, W: 4, A: 1}, {UF: 1, UB: 1, W: 4, A: 2}}, Beta: 4, MGPU: 11}
	// F_1 [0,1) F_2 [1,2) B_2 [2,3), gap [3,4): offload w_2 and prefetch w_1, B_1 [4,5).
	s := &schedule.Periodic{Period: 5, OpStart: []float64{0, 1, 2, 4}, Resident: []bool{false, true, false}, CPUValid: []bool{false, false, true},
		Transfers: []schedule.Transfer{
			{Layer: 1, Kind: schedule.Upload, Start: 0}, {Layer: 2, Kind: schedule.Prefetch, Start: 0},
			{Layer: 2, Kind: schedule.Offload, Start: 3}, {Layer: 1, Kind: schedule.Prefetch, Start: 3}},
		Deletes: []schedule.Delete{{Layer: 1, Time: 1}}}
	rep, err := periodic.Validate(p, s)
	require.NoError(t, err)
	assert.Equal(t, p.MGPU, rep.Peak, "B_2: w_2, δw_2, a^1, a^2")
}
