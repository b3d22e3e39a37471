package rematoffload

import (
	"fmt"
	"sort"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// Bracketed checkpointing: the 004 sequences that store ā^1…ā^k and ā^{n−m+1}…ā^n in the
// forward phase, store only the outputs a^{k+1}…a^{n−m} of the stages between (F_ck), and
// rebuild each ā^j of those, one at a time, just before its backward (F_all^j from a^{j−1},
// then B^j): the compute is Σu + Σ_{k<j≤n−m} u_f^j.
//
// Why a family of its own: on chains of equal blocks (GPT-2, BERT) many sequences recompute
// the same number of blocks, and the one that can be scheduled with transfers stores the
// *earliest* blocks' ā — produced first, read last, they cross the link during the forward
// phase and come back during the last backwards — and the last ones on the GPU, while C_FL's
// optimum at any budget picks among equal-cost sets blindly and rebuilds the middle in
// segments that hold several ā at once. GPT-2 (12 blocks) at 25 %, 12 GB/s: pofo's and every
// C_FL candidate's best schedule was 4216.64 ms (9 blocks recomputed); k = 3, m = 3 (two blocks
// away, eight recomputed) schedules at 4144.42 ms, the link credit's bound.

// bracketMaxStages bounds the chains the family is built for: it has n(n+1)/2 members, each
// checked in O(n) (C_FL's own limit, dp.MaxFloatingStages, is the same size).
const bracketMaxStages = 200

// bracketScan is how many members, the slowest first, are checked for the ones returned.
const bracketScan = 4096

// Bracketed returns at most max members of the family (k ≥ 0 first stages and m ≥ 1 last
// stages stored, the loss among the last) that compute for less than upper (0: any), the
// slowest first — the closer to upper, the less they need away — each valid (verify.Remat)
// and, first, those whose excess over budget at their peak the link could plausibly take
// (bracketCoverable). Nil for chains longer than bracketMaxStages.
func Bracketed(c *instances.Chain, budget int64, beta, upper float64, max int) []SequenceCandidate {
	n := c.Len()
	if n > bracketMaxStages || max <= 0 {
		return nil
	}
	sumU, pf := c.ComputeTime(), make([]float64, n+1) // pf[j] = Σ_{i≤j} u_f^i
	for j := 1; j <= n; j++ {
		pf[j] = pf[j-1] + c.Stage(j).UF
	}
	type member struct {
		k, m    int
		compute float64
	}
	var ms []member
	for k := 0; k < n; k++ {
		for m := 1; k+m <= n; m++ {
			v := sumU + pf[n-m] - pf[k]
			if upper <= 0 || v < upper*(1-1e-12) {
				ms = append(ms, member{k, m, v})
			}
		}
	}
	// The slowest first; among equals the most stored at the end (the GPU's side) first.
	sort.SliceStable(ms, func(a, b int) bool {
		if ms[a].compute != ms[b].compute {
			return ms[a].compute > ms[b].compute
		}
		return ms[a].m > ms[b].m
	})
	var likely, others []SequenceCandidate
	for i, mb := range ms {
		if i >= bracketScan || len(likely) >= max {
			break
		}
		seq := bracketSequence(n, mb.k, mb.m)
		r, err := verify.Remat(c, seq, verify.RematOptions{})
		if err != nil {
			continue // not one of 004's sequences on this chain (never seen; kept safe)
		}
		cand := SequenceCandidate{Sequence: seq, Source: bracketSource(n, mb.k, mb.m)}
		if r.Peak <= budget || bracketCoverable(c, mb.k, mb.m, r.Peak-budget, beta, pf[n]) {
			likely = append(likely, cand)
		} else if len(others) < max {
			others = append(others, cand)
		}
	}
	out := append(likely, others...)
	return out[:min(len(out), max)]
}

// bracketSource names the member (k, m) on n stages.
func bracketSource(n, k, m int) string {
	first := "none of the first stages"
	if k > 0 {
		first = fmt.Sprintf("stages 1–%d", k)
	}
	return fmt.Sprintf("the bracketed checkpointing (%s and %d–%d stored, %d rebuilt one at a time)", first, n-m+1, n, n-m-k)
}

// bracketSequence is the member (k, m) of the family on n stages.
func bracketSequence(n, k, m int) schedule.Sequence {
	seq := make(schedule.Sequence, 0, 3*n)
	op := func(kind schedule.OpKind, l int) { seq = append(seq, schedule.Op{Kind: kind, Stage: l}) }
	for l := 1; l <= k; l++ {
		op(schedule.Fall, l)
	}
	for l := k + 1; l <= n-m; l++ {
		op(schedule.Fck, l)
	}
	for l := n - m + 1; l <= n; l++ {
		op(schedule.Fall, l)
	}
	for l := n; l > n-m; l-- {
		op(schedule.B, l)
	}
	for l := n - m; l > k; l-- {
		op(schedule.Fall, l)
		op(schedule.B, l)
	}
	for l := k; l >= 1; l-- {
		op(schedule.B, l)
	}
	return seq
}

// bracketCoverable says whether excess bytes could be away at the member's peak, the turn:
// they are whole tensors it stores and does not read there — the first k stages' ā and the
// checkpoints a^{k+1}…a^{n−m} — offloaded one at a time in the order they are produced, each
// from the end of its forward, all before the turn starts (forward: Σu_f, no pause). A filter
// for the order only; the schedule decides.
func bracketCoverable(c *instances.Chain, k, m int, excess int64, beta, forward float64) bool {
	var away int64
	t, done := 0.0, 0.0 // the link's clock, the forward phase's
	for j := 1; j <= c.Len()-m; j++ {
		st := c.Stage(j)
		done += st.UF
		size := st.A
		if j <= k {
			size = st.ABar
		}
		end := max(t, done) + float64(size)/beta
		if end > forward {
			break
		}
		t, away = end, away+size
	}
	return excess <= away
}
