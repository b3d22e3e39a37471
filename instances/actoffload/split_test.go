package actoffload_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
)

// TestSplitStops: the peak split's searches over count vectors and extras look at the stop
// channel. On `gen random --seed 707244 --stages 20 --max-size 64MiB --max-time 0.01` at
// 1040653605 B, 12 GB/s they ran 125 s without a look (offload-act --algo all took 135 s
// under --time-limit 60). Stopped after 12 s (its label searches before them, which did look,
// take about 6), Split returns ErrSplitStopped at once; before, past the test's timeout. A
// minimum over part of the vectors would bound nothing: stopped, it is no bound.
func TestSplitStops(t *testing.T) {
	const seed = 707244
	c := instances.Random(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), instances.RandomParams{Stages: 20, MaxSize: 64 << 20, MaxTime: 0.01, WithABar: true, WithOverheads: true, WithWeights: true})
	p, err := act.FromChain(c, 1040653605, 12e9)
	require.NoError(t, err)
	stop := make(chan struct{})
	time.AfterFunc(12*time.Second, func() { close(stop) })
	start := time.Now()
	_, err = p.Split(act.SplitOptions{Stop: stop})
	assert.ErrorIs(t, err, act.ErrSplitStopped)
	assert.Less(t, time.Since(start), 20*time.Second, "a look at the channel every few thousand steps")
}
