// Package modelfile reads a model file by its name: .mps with model/mpsfile (free or fixed
// MPS), .lp with model/lpfile (CPLEX LP), either gzip-compressed when the name ends in .gz.
package modelfile

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// Read reads the model in the file at path, choosing the format by the name's extension (case
// aside): .mps, .lp, .mps.gz or .lp.gz. A malformed file is a *model.ParseError naming path
// and the line.
func Read(path string) (*model.Model, error) {
	name := strings.ToLower(path)
	gz := strings.HasSuffix(name, ".gz")
	name = strings.TrimSuffix(name, ".gz")
	var read func(io.Reader, string) (*model.Model, error)
	switch filepath.Ext(name) {
	case ".mps":
		read = mpsfile.Read
	case ".lp":
		read = lpfile.Read
	default:
		return nil, fmt.Errorf("%s: unknown extension (want .mps or .lp, optionally .gz)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	return read(r, path)
}
