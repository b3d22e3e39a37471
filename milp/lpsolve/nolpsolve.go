//go:build !lpsolve

package lpsolve

import (
	"errors"

	"github.com/memsched/memsched/milp"
)

// New reports that this binary was built without lp_solve.
func New() (milp.Solver, error) {
	return nil, errors.New("lpsolve: memsched was built without lp_solve; build with `make` (build tag lpsolve)")
}
