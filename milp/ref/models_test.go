package ref_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/milp/ref"
	"github.com/memsched/memsched/model/modelfile"
)

// TestModelFiles: the small files of testdata/models that memsched reads (issue 19's
// reproducers among them) solve to their expected optimum with the pure-Go referee too, so that
// the readers' conventions are checked where no C solver is installed (make test-pure).
func TestModelFiles(t *testing.T) {
	s, err := ref.New()
	require.NoError(t, err)
	n := 0
	for _, mf := range milptest.ModelFiles(t) {
		if mf.Memsched.Status == "refused" {
			continue
		}
		m, err := modelfile.Read(mf.Path)
		require.NoError(t, err, mf.Name)
		if m.NumVars() > 40 || m.NumRows() > 40 {
			continue // afiro, forplan, perold: the C backends' tests solve them
		}
		res, err := milp.Solve(context.Background(), s, m, milp.Params{})
		if err != nil {
			// The referee enumerates integer values: it refuses integers without finite bounds.
			assert.ErrorContains(t, err, "infinite bound", mf.Name)
			continue
		}
		n++
		assert.Empty(t, mf.Memsched.Check(res), mf.Name)
	}
	assert.GreaterOrEqual(t, n, 15)
}
