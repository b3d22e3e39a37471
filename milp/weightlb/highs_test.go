//go:build highs

package weightlb_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/instances/reduce"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/highs"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/milp/weightlb"
	"github.com/memsched/memsched/model/mpsfile"
	"github.com/memsched/memsched/verify/periodic"
)

// TestBoundBelowSchedulesHiGHS: on 200 random instances with L ≤ 5, the MILP bound (solved to
// optimality by HiGHS) never exceeds the validated L2L period and never falls below Σu.
func TestBoundBelowSchedulesHiGHS(t *testing.T) {
	s, err := highs.New()
	require.NoError(t, err)
	sweep(t, s, 200, 5, 2)
}

// TestThreePartitionBound: on 002 Thm 1's yes-instances the bound equals the certificate's
// period 2m (= Σu, no idle), and the certificate validates with that period.
func TestThreePartitionBound(t *testing.T) {
	s, err := highs.New()
	require.NoError(t, err)
	for _, tp := range []struct {
		xs     []int64
		groups [][]int
	}{
		{[]int64{4, 5, 6, 4, 5, 6}, [][]int{{0, 1, 2}, {3, 4, 5}}},
		{[]int64{5, 6, 9, 6, 7, 7, 8, 6, 6}, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
	} {
		p, cert, err := reduce.WeightsThreePartition(tp.xs, tp.groups)
		require.NoError(t, err)
		rep, err := periodic.Validate(p, cert)
		require.NoError(t, err)
		m, v, err := weightlb.Build(p)
		require.NoError(t, err)
		res, err := milp.Solve(context.Background(), s, m, milp.Params{})
		require.NoError(t, err)
		require.Equal(t, milp.Optimal, res.Status)
		assert.InDelta(t, rep.Period, res.Objective*v.Units.Time, 1e-6, "m=%d", len(tp.xs)/3)
	}
}

// TestExportedFileCBC: the MILP of a 36-block GPT-2 (hidden 3072, 24 heads, batch 16, fp16,
// M_GPU 6 GiB, 12 GB/s), written as MPS, is solved by CBC to HiGHS's optimum.
func TestExportedFileCBC(t *testing.T) {
	milptest.SkipWithoutExternal(t, "cbc")
	c, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 3072, Heads: 24, Layers: 36, SeqLen: 1024, Batch: 16, DType: "fp16"})
	require.NoError(t, err)
	p, err := offload.FromChain(c, 6<<30, 12e9)
	require.NoError(t, err)
	m, v, err := weightlb.Build(p)
	require.NoError(t, err)
	s, err := highs.New()
	require.NoError(t, err)
	res, err := milp.Solve(context.Background(), s, m, milp.Params{})
	require.NoError(t, err)
	require.Equal(t, milp.Optimal, res.Status)
	path := filepath.Join(t.TempDir(), "lb36.mps")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, mpsfile.Write(f, m))
	require.NoError(t, f.Close())
	got, ok := milptest.RunExternal(t, "cbc", path, false, "-sec", "300")
	require.True(t, ok, "cbc found no optimum")
	assert.InEpsilon(t, res.Objective, got, 1e-6)
	t.Logf("36 layers: HiGHS %.6f s, CBC %.6f s (Σu bound, %d variables)", res.Objective*v.Units.Time, got*v.Units.Time, m.NumVars())
}
