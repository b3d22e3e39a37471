package dp

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStateIndexMatchesMap: the combined DP's open-addressing index answers as a Go map over
// 200 000 random packed keys (key 0 included, many repeats, several growths).
func TestStateIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	ix, ref := newStateIndex(), map[uint64]int32{}
	for i := 0; i < 200_000; i++ {
		k := uint64(r.IntN(1 << 16))
		if i%7 == 0 {
			k = r.Uint64() - 1
		}
		v, ok := ix.get(k)
		w, okRef := ref[k]
		require.Equal(t, okRef, ok, "key %d", k)
		if !ok {
			v, w = int32(i), int32(i)
			ix.put(k, v)
			ref[k] = w
		}
		require.Equal(t, w, v, "key %d", k)
	}
	require.Equal(t, len(ref), ix.n)
}
