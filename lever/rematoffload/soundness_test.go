package rematoffload_test

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/dp"
	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/heuristics/checkpoint"
	heur "github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/combined"
	"github.com/memsched/memsched/verify/oracle"
)

// TestSoundness: on random tiny chains (instances.RandomTiny: 1–5 stages and the loss, sizes
// 1–6 B, times 0–3 s, β 1–4 B/s, budgets from the smallest operation to the store-all peak),
// at byte scale, the same chains × 2^30 (GiB scale) and, on the chains taken at GiB scale, with
// measured-like durations as well (real: each time × 0.0722211… and a random factor, β about
// 12 GB/s; float seconds that share no coarse tick, where the bounds' roundings differ):
//   - the exact global optimum (oracle.Strict) is at most every verified schedule of every
//     lever: every strategy of the combined lever (each validated by verify/combined), the
//     remat lever's optimum (oracle.Remat, a schedule without transfers) and the act-offload
//     lever's (001's event search, written as a combined schedule by FromTimed and validated);
//   - the link-credit bound, fluid and with whole tensors, is at most that optimum, so at
//     most every verified schedule; thinned as the tools build it first, at most itself;
//   - the kept-activation bound (dp.KeptActivations) is at most that optimum too.
//
// By default 200 chains (every fourth at GiB scale and real too); MEMSCHED_COMBINED_SOUNDNESS=1
// runs 2000, each at all three (scripts/bench-report.sh, `make bench`);
// MEMSCHED_COMBINED_SOUNDNESS_SEED draws others.
func TestSoundness(t *testing.T) {
	chains, every := 200, 4
	if os.Getenv("MEMSCHED_COMBINED_SOUNDNESS") != "" {
		chains, every = 2000, 1
	}
	if testing.Short() {
		chains = 60
	}
	// MEMSCHED_COMBINED_SOUNDNESS_SHARD=i/n checks chains k ≡ i (mod n) only: the same chains
	// as one run (every chain is drawn), split over n processes.
	shard, shards := 0, 1
	if v := os.Getenv("MEMSCHED_COMBINED_SOUNDNESS_SHARD"); v != "" {
		_, err := fmt.Sscanf(v, "%d/%d", &shard, &shards)
		require.NoError(t, err, "MEMSCHED_COMBINED_SOUNDNESS_SHARD=%q: want i/n", v)
		require.True(t, shards > 0 && shard >= 0 && shard < shards, "MEMSCHED_COMBINED_SOUNDNESS_SHARD=%q: want 0 ≤ i < n", v)
	}
	// MEMSCHED_COMBINED_SOUNDNESS_SEED=s draws other chains (exploration; CI and `make bench`
	// keep the default 2000).
	seed := uint64(2000)
	if v := os.Getenv("MEMSCHED_COMBINED_SOUNDNESS_SEED"); v != "" {
		_, err := fmt.Sscanf(v, "%d", &seed)
		require.NoError(t, err, "MEMSCHED_COMBINED_SOUNDNESS_SEED=%q: want a number", v)
	}
	r := rand.New(rand.NewPCG(31, seed))
	type counts struct{ points, creditTight, wholeAbove, keptTight, seqOptimal, seqFound, bestOptimal, real, realLimit int }
	var cnt counts
	for k := 0; k < chains; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		if k%shards != shard {
			continue
		}
		for _, f := range []int64{1, 1 << 30, realScale} {
			if f != 1 && k%every != 0 {
				continue
			}
			cc, b, bb := c, budget, beta
			if f != 1 {
				cc, b, bb = c.Scaled(1<<30), budget<<30, beta*(1<<30)
			}
			if f == realScale {
				cc, bb = realDurations(cc, bb, uint64(k))
			}
			name := fmt.Sprintf("chain %d ×%d (M = %d, β = %g)\n%s", k, f, b, bb, describe(cc))
			ref, err := oracle.Strict(cc, b, bb, oracle.StrictOptions{})
			if f == realScale && errors.Is(err, oracle.ErrStrictLimit) {
				cnt.realLimit++ // the search grows much faster on real durations (docs/remat-offload.md)
				continue
			}
			require.NoError(t, err, name)
			if f == realScale {
				cnt.real++
			}
			// Every verified schedule of every lever, as an exact makespan.
			var verified []*big.Rat
			for _, st := range rematoffload.Strategies {
				out, err := st.Run(cc, b, bb, rematoffload.Options{Exact: true, Slots: 64})
				require.NoError(t, err, "%s %s", name, st.Name)
				if !out.Feasible {
					continue
				}
				verified = append(verified, out.Report.Exact)
				if st.Direct() {
					cnt.seqFound++
					if ref.Feasible && out.Report.Exact.Cmp(ref.Makespan) == 0 {
						cnt.seqOptimal++
					}
				}
			}
			if _, m, ok, err := oracle.Remat(cc, b, verify.RematOptions{}); err == nil && ok {
				if f == realScale {
					m *= 1 + 1e-12 // a float sum of real durations can round below the exact one
				}
				verified = append(verified, new(big.Rat).SetFloat64(m))
			}
			if p, err := act.FromChain(cc, b, bb); err == nil {
				ev, err := hact.EventSearch(p, hact.EventOptions{})
				require.NoError(t, err, name)
				if ev.Best != nil {
					s, err := heur.FromTimed(cc, ev.Best.Schedule, bb, false)
					require.NoError(t, err, name)
					rep, err := combined.Check(cc, b, bb, s)
					require.NoError(t, err, "%s: 001's optimum is not a combined schedule", name)
					verified = append(verified, rep.Exact)
				}
			}
			if !ref.Feasible {
				require.Empty(t, verified, "%s: a verified schedule where the referee finds none", name)
				continue
			}
			cnt.points++
			best := ref.Makespan
			first := true
			for _, v := range verified {
				require.GreaterOrEqual(t, v.Cmp(ref.Makespan), 0, "%s: a verified schedule at %s below the optimum %s", name, v.RatString(), ref.Makespan.RatString())
				if first || v.Cmp(best) < 0 {
					best, first = v, false
				}
			}
			if best.Cmp(ref.Makespan) == 0 {
				cnt.bestOptimal++
			}
			opt, _ := ref.Makespan.Float64()
			kb, err := dp.KeptActivations(cc, b, bb, dp.KeptOptions{Upper: opt})
			require.NoError(t, err, name)
			require.LessOrEqual(t, kb.Bound, opt*(1+1e-12), "%s: kept-activation bound %g above the optimum %g", name, kb.Bound, opt)
			require.False(t, kb.Stopped, name)
			if kb.Bound >= opt*(1-1e-9) {
				cnt.keptTight++
			}
			for _, whole := range []bool{false, true} {
				lc, err := dp.LinkCredit(cc, b, bb, dp.LinkCreditOptions{Upper: opt, Whole: whole})
				require.NoError(t, err, name)
				require.LessOrEqual(t, lc.Bound, opt*(1+1e-12), "%s: link credit (whole %v) %g above the optimum %g", name, whole, lc.Bound, opt)
				if !whole && lc.Bound >= opt*(1-1e-9) {
					cnt.creditTight++
				}
				if whole && lc.Bound > lc.Fluid*(1+1e-9) {
					cnt.wholeAbove++
				}
				// Thinned as the tools build it first (dp.LinkCreditThinOfSumU): at most the exact.
				th, err := dp.LinkCredit(cc, b, bb, dp.LinkCreditOptions{Upper: opt, Whole: whole, Thin: dp.LinkCreditThinOfSumU * cc.ComputeTime()})
				require.NoError(t, err, name)
				require.LessOrEqual(t, th.Bound, lc.Bound, "%s: thinned link credit (whole %v) %g above the exact %g", name, whole, th.Bound, lc.Bound)
			}
		}
	}
	t.Logf("%d feasible points: link credit at the optimum on %d (whole tensors raise it on %d), the kept-activation bound on %d; sequence-offload scheduled %d, optimal on %d; the lever's best verified schedule optimal on %d; real durations: %d points searched, %d past the search's limit",
		cnt.points, cnt.creditTight, cnt.wholeAbove, cnt.keptTight, cnt.seqFound, cnt.seqOptimal, cnt.bestOptimal, cnt.real, cnt.realLimit)
}

// realScale marks TestSoundness's third variant: GiB sizes and real durations.
const realScale = -1

// realDurations is instances.RealDurations with its factors drawn from seed.
func realDurations(c *instances.Chain, beta float64, seed uint64) (*instances.Chain, float64) {
	return instances.RealDurations(c, beta, rand.New(rand.NewPCG(seed, 7)))
}
