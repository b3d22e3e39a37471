package rematoffload_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/combined"
	"github.com/memsched/memsched/verify/oracle"
)

// TestFromTimed: 001's optimal schedules (the event search's) of 300 random tiny chains,
// whose loss stage has no output and no gradient (so 001's model and the combined one agree),
// written as combined schedules: each validates under strict timing (verify/combined) with
// the same makespan, at byte and GiB scale.
func TestFromTimed(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 77))
	n := 300
	if testing.Short() {
		n = 60
	}
	done := 0
	for k := 0; k < n; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		budget := sa.Peak - r.Int64N(max(1, sa.Peak/2))
		beta := float64(1 + r.IntN(4))
		for _, f := range []int64{1, 1 << 30} {
			cc, b, bb := c, budget, beta
			if f > 1 {
				cc, b, bb = c.Scaled(f), budget*f, beta*float64(f)
			}
			p, err := act.FromChain(cc, b, bb)
			require.NoError(t, err)
			ev, err := hact.EventSearch(p, hact.EventOptions{})
			require.NoError(t, err)
			if ev.Best == nil {
				continue
			}
			name := fmt.Sprintf("chain %d ×%d, M = %d, β = %g: %v", k, f, b, bb, ev.Best.Schedule)
			s, err := rematoffload.FromTimed(cc, ev.Best.Schedule, bb, false)
			require.NoError(t, err, name)
			rep, err := combined.Check(cc, b, bb, s)
			require.NoError(t, err, name)
			assert.InDelta(t, ev.Best.Report.Makespan, rep.Makespan, 1e-9*rep.Makespan, name)
			done++
		}
	}
	t.Logf("%d schedules of 001 validated as combined schedules", done)
}

// TestSequenceOffloadAgainstReferee: on random tiny chains (byte scale, and every fourth at GiB
// scale) the sequence-offload strategy's schedules validate and are never below the exact
// optimum of the strict combined model (oracle.Strict); it finds one wherever remat alone fits.
func TestSequenceOffloadAgainstReferee(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 78))
	n := 200
	if testing.Short() {
		n = 50
	}
	var found, optimal int
	for k := 0; k < n; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		ref, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{})
		require.NoError(t, err)
		for _, f := range []int64{1, 1 << 30} {
			if f > 1 && k%4 != 0 {
				continue
			}
			cc, b, bb := c, budget, beta
			if f > 1 {
				cc, b, bb = c.Scaled(f), budget*f, beta*float64(f)
			}
			name := fmt.Sprintf("chain %d ×%d, M = %d, β = %g", k, f, b, bb)
			res, err := rematoffload.SequenceOffload(cc, b, bb, 0, nil, rematoffload.Options{})
			require.NoError(t, err, name)
			if res == nil || res.Schedule == nil {
				continue
			}
			rep, err := combined.Check(cc, b, bb, res.Schedule)
			require.NoError(t, err, name)
			require.True(t, ref.Feasible, name)
			require.GreaterOrEqual(t, rep.Exact.Cmp(ref.Makespan), 0, "%s: %s below the optimum %s\n%v\nops %v\ntransfers %v\nstarts %v %v\nref %v %v", name, rep.Exact.RatString(), ref.Makespan.RatString(), describe(cc), res.Schedule.Ops, res.Schedule.Transfers, rep.OpStart, rep.TransferStart, ref.Schedule.Ops, ref.Schedule.Transfers)
			if f == 1 {
				found++
				if rep.Exact.Cmp(ref.Makespan) == 0 {
					optimal++
				}
			}
		}
	}
	t.Logf("%d chains: a schedule on %d, at the optimum on %d", n, found, optimal)
}

func describe(c *instances.Chain) string {
	out := fmt.Sprintf("a0=%d δ0=%d", c.A0, c.Delta0)
	for l, st := range c.Stages {
		out += fmt.Sprintf("\n  %d: uf=%g ub=%g a=%d ā=%d δ=%d of=%d ob=%d", l+1, st.UF, st.UB, st.A, st.ABar, st.Delta, st.OF, st.OB)
	}
	return out
}

// TestSequenceLinkOrder: the toy chain at 97.78 MiB and 1 GB/s, the store-all sequence: Belady's
// cover keeps a^0 and ā^1 away, and the link order by the operation each transfer follows
// offloads a^0 from time 0, so ā^1 leaves only after it and B^5 waits (43.27 ms); the local
// search over the gaps then drops a^0 (42.29 ms). The link order polished (ā^1 first) reaches
// the exhaustive search's optimum, 40.88 ms, which no strategy had found (pofo 41.18 ms).
func TestSequenceLinkOrder(t *testing.T) {
	c := instances.Toy()
	const budget = 102527431
	ref, err := oracle.Strict(c, budget, 1e9, oracle.StrictOptions{})
	require.NoError(t, err)
	require.True(t, ref.Feasible)
	opt, _ := ref.Makespan.Float64()
	assert.InDelta(t, 40.88405e-3, opt, 1e-9)
	r, err := rematoffload.ScheduleSequences(c, budget, 1e9, []rematoffload.SequenceCandidate{{Sequence: checkpoint.StoreAll(c), Source: "store-all"}}, rematoffload.Options{}, 0)
	require.NoError(t, err)
	require.NotNil(t, r.Schedule)
	assert.Zero(t, r.Report.Exact.Cmp(ref.Makespan), "%s against the optimum %s", r.Report.Exact.FloatString(6), ref.Makespan.FloatString(6))
	assert.Equal(t, 2, r.Gaps)
}

// TestGapsOfRoundTrip: the gaps a schedule keeps away (Sequence.GapsOf) are the gaps it was
// built from, on random tiny chains at byte and GiB scale (both cover rules' gaps, scheduled);
// and another strategy's schedule as a seed: the exhaustive search's optimal schedules, given
// to ScheduleSequences with their sequences, have their gaps read back and are scheduled
// again: validated, never below the optimum, and never slower than without the seed (the
// seed's gaps start a local search of their own).
func TestGapsOfRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2811))
	n := 150
	if testing.Short() {
		n = 40
	}
	var built, seeded, mapped, optimal, unseededOptimal int
	for k := 0; k < n; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		f := int64(1)
		if k%2 == 1 {
			f = 1 << 30
		}
		cc, b, bb := c.Scaled(f), budget*f, beta*float64(f)
		name := fmt.Sprintf("chain %d ×%d, M = %d, β = %g", k, f, b, bb)
		sq, err := rematoffload.NewSequence(cc, checkpoint.StoreAll(cc))
		require.NoError(t, err)
		for _, rule := range []rematoffload.CoverRule{rematoffload.Belady, rematoffload.Produced} {
			gaps, ok := sq.CoverBy(b, rule)
			if !ok {
				continue
			}
			s, _, err := sq.Schedule(cc, b, bb, gaps)
			if err != nil {
				continue
			}
			got, ok := sq.GapsOf(s)
			require.True(t, ok, name)
			require.ElementsMatch(t, gaps, got, name)
			built++
		}
		ref, err := oracle.Strict(cc, b, bb, oracle.StrictOptions{})
		require.NoError(t, err, name)
		if !ref.Feasible || len(ref.Schedule.Transfers) == 0 {
			continue
		}
		seq := ref.Schedule.Sequence()
		rsq, err := rematoffload.NewSequence(cc, seq)
		require.NoError(t, err, name)
		if _, ok := rsq.GapsOf(ref.Schedule); ok {
			mapped++
		}
		with, err := rematoffload.ScheduleSequences(cc, b, bb, []rematoffload.SequenceCandidate{{Sequence: seq, Seed: ref.Schedule}}, rematoffload.Options{}, 0)
		require.NoError(t, err, name)
		without, err := rematoffload.ScheduleSequences(cc, b, bb, []rematoffload.SequenceCandidate{{Sequence: seq}}, rematoffload.Options{}, 0)
		require.NoError(t, err, name)
		if without.Schedule != nil {
			require.NotNil(t, with.Schedule, name)
			require.LessOrEqual(t, with.Report.Exact.Cmp(without.Report.Exact), 0, "%s: the seed made it slower", name)
			if without.Report.Exact.Cmp(ref.Makespan) == 0 {
				unseededOptimal++
			}
		}
		if with.Schedule == nil {
			continue
		}
		seeded++
		_, err = combined.Check(cc, b, bb, with.Schedule)
		require.NoError(t, err, name)
		require.GreaterOrEqual(t, with.Report.Exact.Cmp(ref.Makespan), 0, "%s: below the optimum", name)
		if with.Report.Exact.Cmp(ref.Makespan) == 0 {
			optimal++
		}
	}
	require.Positive(t, built)
	require.Positive(t, mapped)
	t.Logf("%d chains: %d schedules' gaps read back; the optimum's own gaps found on %d; seeded with it, a schedule on %d, at the optimum on %d (%d without the seed)", n, built, mapped, seeded, optimal, unseededOptimal)
}

// TestScheduleSequencesSmallSets: ResNet-50 (`gen zoo resnet --depth 50`) at half way from the
// smallest budget to the store-all peak (1820786688 B), 12 GB/s, the sequence of pofo's plan
// there (stages 1, 3 and 4 run again after the turn). The covers and the local search from them
// end at 104.64 ms; a set of two gaps, among the small sets tried after them, runs the sequence
// without a pause — its compute time, 104.54 ms, the least any schedule of it can take — and the
// schedule is valid under strict timing (verify/combined replays it here too).
func TestScheduleSequencesSmallSets(t *testing.T) {
	c, err := zoo.ResNet(zoo.CNNConfig{Depth: 50, Image: 224, Batch: 32})
	require.NoError(t, err)
	sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	require.NoError(t, err)
	lo := verify.MinBudget(c)
	M := lo + (sa.Peak-lo)/2
	require.Equal(t, int64(1820786688), M, "the zoo table's point")
	const beta = 12e9
	var seq schedule.Sequence
	add := func(k schedule.OpKind, l int) { seq = append(seq, schedule.Op{Kind: k, Stage: l}) }
	add(schedule.Fck, 1)
	add(schedule.Fall, 2)
	add(schedule.Fck, 3)
	add(schedule.Fn, 4)
	for l := 5; l <= 19; l++ {
		add(schedule.Fall, l)
	}
	for l := 19; l >= 5; l-- {
		add(schedule.B, l)
	}
	add(schedule.Fall, 3)
	add(schedule.Fall, 4)
	add(schedule.B, 4)
	add(schedule.B, 3)
	add(schedule.B, 2)
	add(schedule.Fall, 1)
	add(schedule.B, 1)
	compute := c.ComputeTime() + c.Stage(1).UF + c.Stage(3).UF + c.Stage(4).UF
	r, err := rematoffload.ScheduleSequences(c, M, beta, []rematoffload.SequenceCandidate{{Sequence: seq, Source: "pofo's"}}, rematoffload.Options{}, 0)
	require.NoError(t, err)
	require.NotNil(t, r.Schedule)
	assert.Positive(t, r.Enumerated)
	assert.InDelta(t, compute, r.Report.Makespan, 1e-9*compute, "%.4f ms against its compute %.4f ms", r.Report.Makespan*1e3, compute*1e3)
	assert.InDelta(t, 104.5385e-3, r.Report.Makespan, 1e-7)
	rep, err := combined.Check(c, M, beta, r.Schedule)
	require.NoError(t, err)
	assert.Equal(t, r.Report.Makespan, rep.Makespan)
	assert.LessOrEqual(t, rep.Peak, M)
}
