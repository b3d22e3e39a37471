package schedule

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanOfRoundTrip: a plan's compute stream reads back into the same plan (offload flags
// aside), the plan and a combined schedule survive JSON, and streams outside the class are
// refused naming the operation.
func TestPlanOfRoundTrip(t *testing.T) {
	p := &CombinedPlan{Segments: []CombinedSegment{
		{Start: 1, End: 2, Backward: Sequence{{Fall, 1}, {Fall, 2}, {B, 2}, {B, 1}}},
		{Start: 3, End: 3, All: true},
		{Start: 4, End: 5, Backward: Sequence{{Fck, 4}, {Fall, 5}, {B, 5}, {Fall, 4}, {B, 4}}},
	}}
	seq := p.Ops(6)
	assert.Equal(t, "Fck^1 Fn^2 Fall^3 Fck^4 Fn^5 Fall^6 B^6 Fck^4 Fall^5 B^5 Fall^4 B^4 B^3 Fall^1 Fall^2 B^2 B^1", seq.String())
	back, err := PlanOf(6, seq)
	require.NoError(t, err)
	assert.Equal(t, p, back)
	p.Segments[1].Offload, p.OffloadLoss = true, true
	data, err := json.Marshal(p)
	require.NoError(t, err)
	var q CombinedPlan
	require.NoError(t, json.Unmarshal(data, &q))
	assert.Equal(t, *p, q)
	assert.Equal(t, 2, q.Offloaded())
	assert.Equal(t, Tensor{Stage: 5}, q.LossInput())

	for _, bad := range []struct {
		seq  Sequence
		want string
	}{
		{Sequence{{Fck, 1}, {Fall, 3}}, "want F_all^2 or F_ck^2"},
		{Sequence{{Fall, 1}, {Fall, 2}, {B, 2}}, "want F_all^3 B^3"},
		{Sequence{{Fall, 1}, {Fall, 2}, {Fall, 3}, {B, 3}, {B, 1}, {B, 2}}, "want B^2"},
		{Sequence{{Fall, 1}, {Fall, 2}, {Fall, 3}, {B, 3}, {B, 2}, {B, 1}, {B, 1}}, "after the last backward part"},
	} {
		_, err := PlanOf(3, bad.seq)
		require.Error(t, err, "%v", bad.seq)
		assert.Contains(t, err.Error(), bad.want)
	}

	s := Combined{Ops: []CombinedOp{{Op: Op{Fall, 1}}, {Op: Op{B, 1}, Wait: []int{1}, Start: 2.5}},
		Transfers: []CombinedTransfer{{Kind: Offload, Tensor: Tensor{Stage: 0}, After: -1}, {Kind: Prefetch, Tensor: Tensor{Stage: 1, Full: true}, After: 0}}}
	data, err = json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"ops":[{"op":"Fall","stage":1,"start":0},{"op":"B","stage":1,"wait":[1],"start":2.5}],
		"transfers":[{"kind":"offload","tensor":"a","stage":0,"after":-1,"start":0},{"kind":"prefetch","tensor":"abar","stage":1,"after":0,"start":0}]}`, string(data))
	var s2 Combined
	require.NoError(t, json.Unmarshal(data, &s2))
	assert.Equal(t, s, s2)
	for _, bad := range []string{`{"kind":"offload","tensor":"x","stage":0,"after":-1}`, `{"kind":"offload","tensor":"a","stage":0}`,
		`{"kind":"upload","tensor":"a","stage":0,"after":-1}`, `{"kind":"offload","tensor":"a","stage":0,"after":-1,"extra":1}`} {
		var tr CombinedTransfer
		assert.Error(t, json.Unmarshal([]byte(bad), &tr), bad)
	}
}
