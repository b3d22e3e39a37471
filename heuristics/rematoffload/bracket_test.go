package rematoffload_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/heuristics/rematoffload"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/combined"
)

// TestBracketed: every member returned is one of 004's sequences on the chain (verify.Remat),
// computes for less than upper, they come the slowest first among those the link could cover
// and then the others (each part in that order), at most max of them; none past 200 stages —
// on random tiny chains at byte and GiB scale and on GPT-2 of 12 blocks.
func TestBracketed(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 31))
	check := func(c *instances.Chain, budget int64, beta, upper float64, max int) {
		cands := rematoffload.Bracketed(c, budget, beta, upper, max)
		require.LessOrEqual(t, len(cands), max)
		for _, cd := range cands {
			rep, err := verify.Remat(c, cd.Sequence, verify.RematOptions{})
			require.NoError(t, err, cd.Source)
			if upper > 0 {
				assert.Less(t, rep.Makespan, upper, cd.Source)
			}
			assert.Contains(t, cd.Source, "the bracketed checkpointing")
		}
	}
	for k := 0; k < 200; k++ {
		c := instances.RandomTiny(r, k)
		sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		require.NoError(t, err)
		lo := verify.MinBudget(c)
		budget := lo + r.Int64N(max(sa.Peak-lo, 0)+1)
		beta := float64(1 + r.IntN(4))
		upper := 0.0
		if k%2 == 1 {
			upper = c.ComputeTime() * (1 + r.Float64())
		}
		check(c, budget, beta, upper, 1+r.IntN(30))
		check(c.Scaled(1<<30), budget<<30, beta*(1<<30), upper, 1+r.IntN(30))
	}
	c, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1024, Batch: 32})
	require.NoError(t, err)
	cands := rematoffload.Bracketed(c, 29331292160, 12e9, 0, 1000)
	assert.Len(t, cands, 14*15/2, "every member: k = 0…13 first stages, m = 1…14−k last")
	// Two parts (those the link could cover, then the others), each the slowest first: the
	// compute rises at most once along the answer.
	prev, rises := 0.0, 0
	for i, cd := range cands {
		rep, err := verify.Remat(c, cd.Sequence, verify.RematOptions{})
		require.NoError(t, err)
		if i > 0 && rep.Makespan > prev*(1+1e-12) {
			rises++
		}
		prev = rep.Makespan
	}
	assert.LessOrEqual(t, rises, 1)
	// Below 9 block forwards (pofo's 4216.64 ms), the members that rebuild 8 come first; the
	// one that schedules at 4144.42 ms is among them (TestSequenceOffloadBracketedGPT2).
	var first []string
	for _, cd := range rematoffload.Bracketed(c, 29331292160, 12e9, c.ComputeTime()+8.5*c.Stage(2).UF, 6) {
		first = append(first, cd.Source)
	}
	assert.Contains(t, first, "the bracketed checkpointing (stages 1–2 and 11–14 stored, 8 rebuilt one at a time)")
	long := instances.Random(rand.New(rand.NewPCG(1, 2)), instances.RandomParams{Stages: 201, MaxSize: 1 << 20, MaxTime: 1})
	assert.Nil(t, rematoffload.Bracketed(long, 1<<40, 1e9, 0, 10), "past 200 stages")
}

// TestSequenceOffloadBracketedGPT2: on GPT-2 of 12 blocks at 25 % of its remat range
// (29 331 292 160 B) and 12 GB/s, every strategy's best schedule, and every C_FL candidate's,
// recomputed 9 blocks (4216.64 ms, docs/combined-zoo.tsv); the bracketed checkpointing that
// stores the first two stages' ā (the embedding's and block 0's, sent away during the forward
// phase) and the last four on the GPU rebuilds 8 and schedules without a pause: 4144.42 ms,
// Σu + 8 block forwards, which is the link credit's bound there (proven optimal;
// report.TestCertifyProvesGPT2At25).
func TestSequenceOffloadBracketedGPT2(t *testing.T) {
	c, err := zoo.Transformer(zoo.TransformerConfig{Kind: "gpt2", Hidden: 768, Heads: 12, Layers: 12, SeqLen: 1024, Batch: 32})
	require.NoError(t, err)
	const budget, beta = 29331292160, 12e9
	require.InDelta(t, 3566.654e-3, c.ComputeTime(), 0.001e-3)
	res, err := rematoffload.SequenceOffload(c, budget, beta, 4216.6447e-3, nil, rematoffload.Options{})
	require.NoError(t, err)
	require.NotNil(t, res)
	require.NotNil(t, res.Report, res.Why)
	rep, err := combined.Check(c, budget, beta, res.Schedule)
	require.NoError(t, err)
	assert.Equal(t, rep.Makespan, res.Report.Makespan)
	blockF := c.Stage(2).UF
	assert.InDelta(t, c.ComputeTime()+8*blockF, rep.Makespan, 1e-9, "eight block forwards, no pause")
	assert.Contains(t, res.Source, "the bracketed checkpointing")
}
