package milptest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/modelfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// TestModelFilesCBC: cbc makes of each file of testdata/models what expected.tsv says it does —
// the CBC column is measured, not assumed.
func TestModelFilesCBC(t *testing.T) {
	milptest.SkipWithoutExternal(t, "cbc")
	for _, mf := range milptest.ModelFiles(t) {
		status, obj := milptest.RunCBC(t, mf.Plain(t), mf.Maximizes(t))
		assert.True(t, mf.CBC.Matches(status, obj), "%s: cbc says %s %.10g, expected.tsv %v", mf.Name, status, obj, mf.CBC)
	}
}

// TestModelFilesRoundTripCBC: every file memsched reads, written back by memsched's MPS and LP
// writers, is solved by cbc to memsched's outcome — the writers' files mean the same model to an
// independent reader.
func TestModelFilesRoundTripCBC(t *testing.T) {
	milptest.SkipWithoutExternal(t, "cbc")
	for _, mf := range milptest.ModelFiles(t) {
		if mf.Memsched.Status == "refused" {
			continue
		}
		m, err := modelfile.Read(mf.Path)
		require.NoError(t, err, mf.Name)
		sense, _, _ := m.Objective()
		for _, w := range []struct {
			ext   string
			write func(*os.File, *model.Model) error
		}{
			{"mps", func(f *os.File, m *model.Model) error { return mpsfile.Write(f, m) }},
			{"lp", func(f *os.File, m *model.Model) error { return lpfile.Write(f, m) }},
		} {
			path := filepath.Join(t.TempDir(), "m."+w.ext)
			f, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, w.write(f, m))
			require.NoError(t, f.Close())
			status, obj := milptest.RunCBC(t, path, sense == model.Maximize)
			assert.True(t, mf.Memsched.Matches(status, obj), "%s written as %s: cbc says %s %.10g, want %v", mf.Name, w.ext, status, obj, mf.Memsched)
		}
	}
}
