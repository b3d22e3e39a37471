package pipeline

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
)

// TestDeadlineAndStopTogether: with recomputation Plan runs the store-all search inside
// itself, whose stop channel watches the outer one while its own timer fires at the same
// deadline — two closers of one channel. It once panicked ("close of closed channel") in CI.
// Deadlines at and around the moment of the call, with and without a caller's stop, hundreds
// of times.
func TestDeadlineAndStopTogether(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 9))
	c := instances.Random(r, instances.RandomParams{Stages: 14, MaxSize: 1 << 20, MaxTime: 0.01, WithABar: true})
	p := &pl.Problem{Chain: c, GPUs: 3, Memory: 8 << 20, Bandwidth: 25e9, MicroBatches: 6}
	for k := range 400 {
		o := Options{Remat: true, Deadline: time.Now().Add(time.Duration(k%5-2) * 100 * time.Microsecond)}
		if k%2 == 0 {
			outer := make(chan struct{})
			time.AfterFunc(time.Until(o.Deadline), func() { close(outer) })
			o.Stop = outer
		}
		_, err := Plan(p, o)
		if err != nil {
			require.ErrorIs(t, err, ErrStopped, "%d", k)
		}
	}
}
