//go:build highs

package highs

import (
	"testing"

	"github.com/memsched/memsched/milp/milptest"
)

// HiGHS's duals turned into safe bounds: never past a known optimum, within 1e-9 of its LP value.
func TestSafeLPBound(t *testing.T) {
	milptest.RunSafeBound(t, New, 1e-9)
}
