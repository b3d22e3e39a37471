//go:build highs

package highs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// viaHiGHSReader writes a model with memsched's writer and reads it back with HiGHS's own
// reader: an independent parser of the files memsched exports.
func viaHiGHSReader(t *testing.T, ext string, write func(*os.File, *model.Model) error) milptest.RoundTrip {
	return milptest.RoundTrip{Name: "highs-reader-" + ext, Via: func(m *model.Model) (*model.Model, error) {
		path := filepath.Join(t.TempDir(), "m."+ext)
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		if err := write(f, m); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		return ReadFile(path)
	}}
}

func TestConformanceFiles(t *testing.T) {
	milptest.Run(t, New, milptest.Config{
		Caps: milptest.Capabilities{Integer: true, ProvesUnbounded: true, InfiniteIntegers: true},
		RoundTrips: []milptest.RoundTrip{
			milptest.MPS,
			milptest.LP,
			viaHiGHSReader(t, "mps", func(f *os.File, m *model.Model) error { return mpsfile.Write(f, m) }),
			viaHiGHSReader(t, "lp", func(f *os.File, m *model.Model) error { return lpfile.Write(f, m) }),
		},
	})
}
