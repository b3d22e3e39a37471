package schedule

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSequenceTextRoundTrip(t *testing.T) {
	seq := Sequence{{Fck, 1}, {Fn, 2}, {Fall, 3}, {B, 3}, {Del, 1}}
	got, err := ParseSequenceText(strings.NewReader("# a comment\n" + seq.String() + "\n"))
	require.NoError(t, err)
	assert.Equal(t, seq, got)
	got, err = ParseSequenceText(strings.NewReader("Fck^1,Fn^2\n\tFall^3  B^3 Del^1 # tail"))
	require.NoError(t, err)
	assert.Equal(t, seq, got)
	for _, bad := range []struct{ text, want string }{
		{"Fck^1\nFoo^2", "line 2"},
		{"Fck^x", "not an integer"},
		{"Fck", "KIND^STAGE"},
	} {
		_, err := ParseSequenceText(strings.NewReader(bad.text))
		require.Error(t, err, bad.text)
		assert.Contains(t, err.Error(), bad.want, bad.text)
	}
}

func TestPeriodicTextRoundTrip(t *testing.T) {
	s := &Periodic{Period: 6.5, OpStart: []float64{0, 1, 2, 3}, Transfers: []Transfer{{2, Prefetch, 0.25}, {1, Offload, 3.5}},
		Deletes: []Delete{{1, 4.75}}, Resident: []bool{false, true, false}, CPUValid: []bool{false, false, true}}
	var b strings.Builder
	require.NoError(t, WritePeriodicText(&b, s))
	got, err := ParsePeriodicText(strings.NewReader(b.String()), 2)
	require.NoError(t, err)
	assert.Equal(t, s, got)
	for _, bad := range []struct{ text, want string }{
		{"period 1\nop F 1 0\nop F 2 0\nop B 2 0", "B 1 is missing"},
		{"period 1\nop F 3 0", "not in 1..2"},
		{"period x", "not a finite number"},
		{"op F 1 0\nop F 1 1", "already given on line 1"},
		{"transfer teleport 1 0", "unknown transfer kind"},
		{"wait 3", "unknown statement"},
		{"op F 1", "takes 3 fields"},
	} {
		_, err := ParsePeriodicText(strings.NewReader(bad.text), 2)
		require.Error(t, err, bad.text)
		assert.Contains(t, err.Error(), bad.want, bad.text)
	}
}

func TestTimedTextRoundTrip(t *testing.T) {
	s := &Timed{Ops: []TimedOp{{false, 0, 0}, {false, 1, 1.5}, {true, 1, 2}, {true, 0, 3.25}},
		Transfers: []ActTransfer{{Offload, 0, 0}, {Prefetch, 0, 2.5}}}
	var b strings.Builder
	require.NoError(t, WriteTimedText(&b, s))
	got, err := ParseTimedText(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Equal(t, s, got)
	for _, bad := range []struct{ text, want string }{
		{"op X 0 0", "not F or B"},
		{"transfer upload 0 0", "not offload or prefetch"},
		{"op F -1 0", "integer ≥ 0"},
		{"op F 0 inf", "finite"},
		{"wait 1", "unknown statement"},
	} {
		_, err := ParseTimedText(strings.NewReader(bad.text))
		require.Error(t, err, bad.text)
		assert.Contains(t, err.Error(), bad.want, bad.text)
	}
}
