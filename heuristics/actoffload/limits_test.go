package actoffload

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
)

// TestHeuristicsStop: GREEDY and VDNN end when their stop channel closes (issue 29: on a
// 20 001-stage chain at 2 GiB, VDNN took 110 s and one no-wait simulation of GREEDY's seconds,
// with certify's act-offload share at 3 s). Closed before they start, they return at once,
// Stopped, without a schedule; closed 0.3 s in, within a second or two, Stopped — VDNN with
// the best of the sets it tried, if any, validated like any other. The exact search too, its
// simulations included (Stopped, never a proof). Without a stop channel GreedyUntil and
// VDNNUntil are Greedy and VDNN on a small chain.
func TestHeuristicsStop(t *testing.T) {
	c := instances.Random(rand.New(rand.NewPCG(1, 2)), instances.RandomParams{Stages: 20001, MaxSize: 64 << 20, MaxTime: 0.01, WithABar: true, WithOverheads: true})
	p, err := act.FromChain(c, 2<<30, 12e9)
	require.NoError(t, err)
	closed := make(chan struct{})
	close(closed)
	for name, f := range map[string]func(stop <-chan struct{}) (*Result, error){
		"greedy": func(stop <-chan struct{}) (*Result, error) { return GreedyUntil(p, stop) },
		"vdnn":   func(stop <-chan struct{}) (*Result, error) { return VDNNUntil(p, VDNNBoth, stop) },
	} {
		start := time.Now()
		r, err := f(closed)
		require.NoError(t, err, name)
		assert.True(t, r.Stopped, name)
		assert.False(t, r.Feasible, name)
		assert.Less(t, time.Since(start), time.Second, name)

		stop := make(chan struct{})
		time.AfterFunc(300*time.Millisecond, func() { close(stop) })
		start = time.Now()
		r, err = f(stop)
		require.NoError(t, err, name)
		assert.True(t, r.Stopped, name)
		assert.Less(t, time.Since(start), 2500*time.Millisecond, name)
		if r.Feasible {
			assert.NotNil(t, r.Report, name)
		}
	}

	// The exact search: one node replays the chain, and it used to look at its channel every
	// 1024 nodes (offload-act --algo all on this chain ran past a 10-minute test timeout).
	stop := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(stop) })
	start := time.Now()
	_, st, err := Exact(p, ExactOptions{Stop: stop})
	require.NoError(t, err)
	assert.Equal(t, Stopped, st)
	assert.Less(t, time.Since(start), 2500*time.Millisecond)

	small, err := act.FromChain(instances.Random(rand.New(rand.NewPCG(3, 4)), instances.RandomParams{Stages: 12, MaxSize: 64 << 20, MaxTime: 0.01, WithABar: true}), 200<<20, 12e9)
	require.NoError(t, err)
	g1, err := Greedy(small)
	require.NoError(t, err)
	g2, err := GreedyUntil(small, make(chan struct{}))
	require.NoError(t, err)
	assert.Equal(t, g1, g2)
	v1, err := VDNN(small, VDNNBoth)
	require.NoError(t, err)
	v2, err := VDNNUntil(small, VDNNBoth, make(chan struct{}))
	require.NoError(t, err)
	assert.Equal(t, v1, v2)
}

// TestExactProvesTooSmallAtOnce: below MinMemory no schedule exists (an operation's own
// tensors exceed M_GPU); the exact search says so at once, Optimal without a schedule. It
// searched to its limit before (offload-act --algo all on a 40-stage TiB-scale chain: the
// whole --time-limit, 60 s, "none found"); the stop closed after 2 s made that Stopped.
func TestExactProvesTooSmallAtOnce(t *testing.T) {
	for _, scale := range []int64{64, 1 << 40} {
		c := instances.Random(rand.New(rand.NewPCG(939079, 40)), instances.RandomParams{Stages: 40, MaxSize: scale, MaxTime: 0.01, WithABar: true, WithOverheads: true})
		p0, err := act.FromChain(c, 1, 12e9)
		require.NoError(t, err)
		p, err := act.FromChain(c, p0.MinMemory()-1, 12e9)
		require.NoError(t, err)
		stop := make(chan struct{})
		tm := time.AfterFunc(2*time.Second, func() { close(stop) })
		r, st, err := Exact(p, ExactOptions{Stop: stop})
		tm.Stop()
		require.NoError(t, err)
		assert.Equal(t, Optimal, st, "scale %d: proven, not stopped", scale)
		assert.False(t, r.Feasible)
		// One byte more and the same search may find one: the early answer is only below it.
		p1, err := act.FromChain(c, p0.MinMemory(), 12e9)
		require.NoError(t, err)
		stop1 := make(chan struct{})
		close(stop1)
		_, st1, err := Exact(p1, ExactOptions{Stop: stop1})
		require.NoError(t, err)
		assert.NotEqual(t, Optimal, st1, "scale %d: at MinMemory the search has to run", scale)
	}
}
