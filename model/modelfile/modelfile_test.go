package modelfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/modelfile"
)

func TestRead(t *testing.T) {
	models := filepath.Join("..", "..", "testdata", "models")
	m, err := modelfile.Read(filepath.Join(models, "netlib", "afiro.mps.gz"))
	require.NoError(t, err)
	assert.Equal(t, []int{27, 32}, []int{m.NumRows(), m.NumVars()}, "afiro, gzipped MPS")
	m, err = modelfile.Read(filepath.Join(models, "memsched", "end-label.lp"))
	require.NoError(t, err)
	assert.Equal(t, "end", m.RowName(0))

	dir := t.TempDir()
	for name, content := range map[string]string{"m.txt": "", "m.lp.gz": "not gzip", "m.MPS": "NAME x\nROWS\n Q c\nENDATA\n"} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		_, err := modelfile.Read(path)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), path, name)
	}
	_, err = modelfile.Read(filepath.Join(dir, "m.MPS"))
	var pe *model.ParseError
	assert.ErrorAs(t, err, &pe, "upper-case extension read as MPS")
	_, err = modelfile.Read(filepath.Join(dir, "absent.lp"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
