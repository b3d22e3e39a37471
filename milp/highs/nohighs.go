//go:build !highs

package highs

import (
	"errors"

	"github.com/memsched/memsched/milp"
)

// New reports that this binary was built without HiGHS.
func New() (milp.Solver, error) {
	return nil, errors.New("highs: memsched was built without HiGHS; build with `make` (build tag highs)")
}
