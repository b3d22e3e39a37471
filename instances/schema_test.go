package instances

import (
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchemaMatchesLoader keeps docs/chain.schema.json and the loader's field lists in step:
// the same known and required fields at every level, and the same units.
func TestSchemaMatchesLoader(t *testing.T) {
	raw, err := os.ReadFile("../docs/chain.schema.json")
	require.NoError(t, err)
	type obj struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      *obj                       `json:"items"`
		Enum       []string                   `json:"enum"`
	}
	var top obj
	require.NoError(t, json.Unmarshal(raw, &top))
	sub := func(o obj, k string) obj {
		var s obj
		require.NoError(t, json.Unmarshal(o.Properties[k], &s))
		return s
	}
	keys := func(o obj) []string {
		var ks []string
		for k := range o.Properties {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	sorted := func(s []string) []string { s = append([]string(nil), s...); sort.Strings(s); return s }
	check := func(o obj, fs fieldSet, what string) {
		assert.Equal(t, sorted(fs.known), keys(o), what+" fields")
		assert.Equal(t, sorted(fs.required), sorted(o.Required), what+" required")
	}
	check(top, topFields, "top")
	check(sub(top, "input"), inputFields, "input")
	check(sub(top, "units"), unitFields, "units")
	check(*sub(top, "stages").Items, stageFields, "stage")
	var units []string
	for u := range memoryUnits {
		units = append(units, u)
	}
	assert.Equal(t, sorted(units), sorted(sub(sub(top, "units"), "memory").Enum))
	units = units[:0]
	for u := range timeUnits {
		units = append(units, u)
	}
	assert.Equal(t, sorted(units), sorted(sub(sub(top, "units"), "time").Enum))
}
