package dp

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/verify"
)

func guardChain(stages int) *instances.Chain {
	r := rand.New(rand.NewPCG(7, uint64(stages)))
	return instances.Random(r, instances.RandomParams{Stages: stages, MaxSize: 64 << 20, MaxTime: 5e-3,
		WithABar: true, WithOverheads: true})
}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) int64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return int64(b.TotalAlloc - a.TotalAlloc)
}

// TestTableEstimates: the size estimates that guard the tables are their allocations (within
// 15 %: the slotted chain, the goroutines and the reconstruction come on top). A change to a
// table's layout must update its estimate, next to it.
func TestTableEstimates(t *testing.T) {
	c := guardChain(60)
	budget := 3 * verify.MinBudget(c)
	for _, slots := range []int{100, 400} {
		var p *Persistent
		got := allocated(func() { p, _ = NewPersistent(c, budget, Options{Slots: slots}) })
		require.NotNil(t, p)
		want := persistentBytes(c.Len(), p.m)
		assert.InEpsilon(t, float64(want), float64(got), 0.15, "C_MP, %d slots: estimate %d, allocated %d", slots, want, got)
	}
	c = guardChain(25)
	budget = 3 * verify.MinBudget(c)
	var f *Floating
	got := allocated(func() { f, _ = NewFloating(c, budget, Options{Slots: 200}) })
	require.NotNil(t, f)
	want := floatingBytes(c.Len(), f.m)
	assert.InEpsilon(t, float64(want), float64(got), 0.15, "C_FL: estimate %d, allocated %d", want, got)
}

// TestTooLarge: a table above the memory limit is refused before anything is allocated, with
// its size, the limit and what to do; 10 002 stages (a 10 000-block GPT-2) cannot have a C_MP
// table under the default limit at any slot count, and the answer takes no time.
func TestTooLarge(t *testing.T) {
	c := guardChain(200)
	budget := 3 * verify.MinBudget(c)
	_, err := NewPersistent(c, budget, Options{MaxMemory: 16 << 20})
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(16<<20), tl.Limit)
	assert.Greater(t, tl.Bytes, tl.Limit)
	assert.Contains(t, err.Error(), "C_MP (persistent) with 500 slots on 200 stages table would take")
	k := PersistentSlotsWithin(200, 500, 16<<20)
	require.Positive(t, k)
	assert.Contains(t, err.Error(), "use --slots "+strconv.Itoa(k)+" or fewer")
	_, err = NewPersistent(c, budget, Options{Slots: k, MaxMemory: 16 << 20})
	assert.NoError(t, err, "the advice holds")

	_, err = NewRevolve(c, budget, Options{MaxMemory: 16 << 20})
	assert.ErrorContains(t, err, "revolve with 500 slots")

	big := guardChain(10002)
	_, err = NewPersistent(big, 1<<40, Options{})
	require.ErrorAs(t, err, &tl)
	assert.Contains(t, err.Error(), "fewer than 16 slots would fit: use another algorithm (sequential, store-all) or raise --max-memory")
	assert.Greater(t, tl.Bytes, int64(200e9))

	_, err = NewFloating(guardChain(200), 1<<40, Options{})
	assert.ErrorContains(t, err, "C_FL (floating) with 500 slots on 200 stages table would take")
	assert.Equal(t, 0, FloatingSlotsWithin(200, 500, 1<<20))

	_, err = NewFloatingExact(guardChain(150), 1<<40, ExactOptions{MaxMemory: 1 << 20})
	assert.ErrorContains(t, err, "exact C_FL on 150 stages")
	_, err = NewPersistentExact(big, 1<<40, ExactOptions{})
	assert.ErrorContains(t, err, "exact C_MP on 10002 stages")
	// Room for the headers but few breakpoints: the caller falls back to slots.
	small := guardChain(40)
	_, err = NewPersistentExact(small, 3*verify.MinBudget(small), ExactOptions{MaxMemory: persistentExactFixedBytes(small, recCMP) + 2000})
	var be *BreakpointError
	assert.ErrorAs(t, err, &be)
}

// TestStop: a closed Stop channel stops every table with ErrStopped.
func TestStop(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	c := guardChain(80)
	budget := 3 * verify.MinBudget(c)
	_, err := NewPersistent(c, budget, Options{Stop: stop})
	assert.ErrorIs(t, err, ErrStopped)
	_, err = NewPersistent(guardChain(5), 3*verify.MinBudget(guardChain(5)), Options{Slots: 10, Stop: stop})
	assert.ErrorIs(t, err, ErrStopped, "the serial path too")
	_, err = NewFloating(guardChain(20), budget, Options{Stop: stop})
	assert.ErrorIs(t, err, ErrStopped)
	_, err = NewPersistentExact(c, budget, ExactOptions{Stop: stop})
	assert.ErrorIs(t, err, ErrStopped)
	_, err = NewFloatingExact(guardChain(20), budget, ExactOptions{Stop: stop})
	assert.ErrorIs(t, err, ErrStopped)
	p, err := act.FromChain(c, budget/2, 1e9)
	require.NoError(t, err)
	_, err = DynProg(p, ActOptions{Stop: stop})
	assert.ErrorIs(t, err, ErrStopped)
	_, err = InterruptibleBound(p, ActOptions{Stop: stop})
	assert.True(t, errors.Is(err, ErrStopped))
	_, err = DynProg(p, ActOptions{MaxMemory: 1000})
	var tl *TooLargeError
	assert.ErrorAs(t, err, &tl)
}

// TestCombinedTooLargeInCallersSlots: pofo's inner C_MP table has the caller's slots widened
// by what the link moves during the forward pass, and its refusal says so and counts the
// slots that fit in the caller's --slots: with them the table is built, with one more it is
// refused (it used to say "C_MP with 500 slots; use --slots 127 or fewer" to a caller who had
// asked for 100, and 127 was refused too). WithOther names the caller's alternatives.
func TestCombinedTooLargeInCallersSlots(t *testing.T) {
	c := guardChain(200)
	budget, beta := 3*verify.MinBudget(c), 1e12 // the forward pass can move everything: ×5
	limit := int64(16 << 20)
	_, err := Combined(c, budget, beta, CombinedOptions{Slots: 100, MaxMemory: limit})
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Contains(t, err.Error(), "inside pofo with 500 slots (--slots 100, widened")
	require.GreaterOrEqual(t, tl.Slots, minUsefulSlots)
	assert.Less(t, tl.Slots, PersistentSlotsWithin(200, 500, limit), "counted in the caller's slots")
	assert.Contains(t, err.Error(), "use --slots "+strconv.Itoa(tl.Slots)+" or fewer, another algorithm")

	// With the slots it names the table is built (and solved).
	_, err = Combined(c, budget, beta, CombinedOptions{Slots: tl.Slots, MaxMemory: limit})
	assert.False(t, errors.As(err, new(*TooLargeError)), "the advice holds: %v", err)
	_, err = Combined(c, budget, beta, CombinedOptions{Slots: tl.Slots + 1, MaxMemory: limit})
	assert.ErrorAs(t, err, new(*TooLargeError), "and it is the most that does")

	assert.Contains(t, tl.WithOther("another --algo").Error(), "or fewer, another --algo, or raise")
	plain := &TooLargeError{Table: "t", Hint: "h"}
	assert.Same(t, plain, plain.WithOther("x"), "not a slotted table's: unchanged")
}
