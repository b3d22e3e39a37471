package ref_test

import (
	"testing"

	"github.com/memsched/memsched/milp/milptest"
	"github.com/memsched/memsched/milp/ref"
)

// TestConformance runs the suite on the referee, in memory and through memsched's MPS files,
// so that it runs on a machine without any C library.
func TestConformance(t *testing.T) {
	milptest.Run(t, ref.New, milptest.Config{
		Caps:       milptest.Capabilities{Integer: true, ProvesUnbounded: true},
		RoundTrips: []milptest.RoundTrip{milptest.MPS, milptest.LP},
	})
}
