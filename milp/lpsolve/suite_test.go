//go:build lpsolve

package lpsolve

import (
	"testing"

	"github.com/memsched/memsched/milp/milptest"
)

func TestConformance(t *testing.T) {
	milptest.Run(t, New, milptest.Config{
		Caps:       milptest.Capabilities{Integer: true, ProvesUnbounded: true, InfiniteIntegers: true},
		RoundTrips: []milptest.RoundTrip{milptest.MPS, milptest.LP},
	})
}
