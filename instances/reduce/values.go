package reduce

import (
	"fmt"

	"github.com/memsched/memsched/instances"
)

// sumValues checks that the values of a partition instance are positive and returns their
// sum, which must be at most instances.MaxBytes: the values become sizes (and the sum a
// budget), so a sum that does not fit is refused rather than wrapped.
func sumValues(kind string, xs []int64) (int64, error) {
	var sum int64
	for i, x := range xs {
		if x <= 0 {
			return 0, fmt.Errorf("reduce: %s value %d = %d must be positive", kind, i, x)
		}
		var ok bool
		if sum, ok = instances.SumBytes(sum, x); !ok {
			return 0, fmt.Errorf("reduce: %s values: the sum passes 2^60 (the most memsched computes with) at value %d = %d", kind, i, x)
		}
	}
	return sum, nil
}
