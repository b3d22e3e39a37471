package schedule

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPeriodicJSONRoundTrip: a periodic schedule printed as JSON (as `memsched offload-weights
// --json` does) reads back equal; an unknown transfer kind is an error naming it.
func TestPeriodicJSONRoundTrip(t *testing.T) {
	s := &Periodic{Period: 5, OpStart: []float64{0.5, 1.5}, Resident: []bool{false, false}, CPUValid: []bool{false, true},
		Transfers: []Transfer{{Layer: 1, Kind: Offload, Start: 3.5}, {Layer: 1, Kind: Prefetch, Start: 4.5}, {Layer: 1, Kind: Upload, Start: 0}},
		Deletes:   []Delete{{Layer: 1, Time: 2}}}
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"kind":"prefetch"`)
	var back Periodic
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, s, &back)

	err = json.Unmarshal([]byte(`{"transfers":[{"layer":1,"kind":"teleport","start":0}]}`), &back)
	assert.ErrorContains(t, err, `unknown transfer kind "teleport"`)
}
