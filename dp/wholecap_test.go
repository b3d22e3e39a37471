package dp

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWholeCapPrefixes: the prefixes built one job at a time are the sets newWholeCap builds
// from scratch for each prefix, point for point — past maxCapPoints (merged pairs) too, with
// equal releases, zero sizes, byte and GiB scale, and jobs out of release order.
func TestWholeCapPrefixes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 29))
	for k := 0; k < 60; k++ {
		n := 1 + r.IntN(18)
		scale := int64(1)
		if k%2 == 1 {
			scale = 1 << 30
		}
		beta := float64(1+r.IntN(5)) * float64(scale)
		jobs := make([]capJob, n)
		rel := 0.0
		for j := range jobs {
			if k%10 == 9 {
				rel = float64(r.IntN(6)) // out of order
			} else {
				rel += float64(r.IntN(3))
			}
			sizes := []int64{int64(r.IntN(5000)) * scale, int64(r.IntN(7)) * scale}
			jobs[j] = capJob{release: rel, sizes: sizes}
		}
		got, ok := wholeCapPrefixes(jobs, beta, nil)
		require.True(t, ok)
		require.Len(t, got, n)
		for m := range jobs {
			want := newWholeCap(jobs[:m+1], beta)
			require.Equal(t, want, got[m], "chain %d, prefix %d", k, m)
			require.LessOrEqual(t, len(got[m].finish), maxCapPoints)
		}
	}
}
