//go:build !highs

package highs

import (
	"errors"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

// New reports that this binary was built without HiGHS.
func New() (milp.Solver, error) {
	return nil, errors.New("highs: memsched was built without HiGHS; build with `make` (build tag highs)")
}

// ReadFile reports that reading LP files with HiGHS's reader needs a build with HiGHS.
func ReadFile(path string) (*model.Model, error) {
	return nil, errors.New("highs: reading " + path + " with HiGHS's reader needs a build with HiGHS; build with `make` (build tag highs), or use an .mps file")
}
