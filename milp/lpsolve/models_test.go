//go:build lpsolve

package lpsolve_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/lpsolve"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model/modelfile"
)

// TestModelFiles: each file of testdata/models that memsched reads is solved through
// milp.Solve with lp_solve to the outcome expected.tsv gives — Netlib perold among them, whose
// lp_solve point memsched used to refuse (a 1.3e-6 excess on a zero-side row with terms near
// 10³), printing no status.
func TestModelFiles(t *testing.T) {
	s, err := lpsolve.New()
	require.NoError(t, err)
	for _, mf := range milptest.ModelFiles(t) {
		if mf.Memsched.Status == "refused" {
			continue
		}
		m, err := modelfile.Read(mf.Path)
		require.NoError(t, err, mf.Name)
		res, err := milp.Solve(context.Background(), s, m, milp.Params{})
		require.NoError(t, err, mf.Name)
		assert.Empty(t, mf.Memsched.Check(res), mf.Name)
	}
}
