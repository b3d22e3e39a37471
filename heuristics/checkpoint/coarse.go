package checkpoint

import (
	"fmt"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// Coarse is a chain whose consecutive stages are grouped into super-stages, with sizes chosen
// so that every 004 sequence of the coarse chain, expanded (Expand), needs no more memory on the
// fine chain than on the coarse one. Rotor's C_MP is O(L³): on 2001 stages even 16 slots take
// 23 s, and sequential checkpointing needs four times the memory; on the grouped chain it is
// a fraction of a second, and its sequence is a valid — persistent, not optimal — sequence of
// the fine chain.
type Coarse struct {
	Chain *instances.Chain
	// Starts[g] is the first fine stage of super-stage g+1; Starts[len] = L+2.
	Starts []int
}

// NewCoarse groups the stages of c into at most groups runs of consecutive stages of equal
// length (the first ones one longer). Super-stage g, stages s..e of c, has (SPEC §1, 004
// Table 1, as verify.RematState.Apply replays them) u_f = Σ u_f^k, u_b = Σ u_b^k, a = a^e,
// ā = Σ ā^k, δ = δ^e, and overheads that cover its expansion: o_f is at least every o_f^k
// (F_all^s … F_all^e hold the ā^j before k, within ā), a^s + o_f^s − a^e (F_ck^s or F_∅^s) and
// a^{k-1} + a^k + o_f^k − a^e for k > s (F_∅^k holds its input and output beside the group's
// input); o_b is at least δ^k + δ^{k-1} + o_b^k − δ^e − δ^{s-1} − Σ_{k<j≤e} ā^j (B^k holds
// δ^k and the ā^j not yet consumed, and allocates δ^{k-1}, where the coarse B holds δ^e and ā
// and allocates δ^{s-1}), and 0.
func NewCoarse(c *instances.Chain, groups int) (*Coarse, error) {
	n := c.Len()
	if groups < 1 || groups > n {
		return nil, fmt.Errorf("checkpoint: %d groups for %d stages (want 1..%d)", groups, n, n)
	}
	out := &Coarse{Chain: &instances.Chain{Name: c.Name, A0: c.A0, Delta0: c.Delta0}}
	size, extra := n/groups, n%groups
	s := 1
	for g := 0; g < groups; g++ {
		e := s + size - 1
		if g < extra {
			e++
		}
		out.Starts = append(out.Starts, s)
		st := instances.Stage{Name: fmt.Sprintf("%s…%s", c.Stage(s).Name, c.Stage(e).Name), A: c.Stage(e).A, Delta: c.Stage(e).Delta}
		var of, ob int64
		var after int64 // Σ ā^j for j > k within the group, for the backward sweep
		for k := s; k <= e; k++ {
			f := c.Stage(k)
			st.UF += f.UF
			st.UB += f.UB
			st.ABar += f.ABar
			st.W += f.W
			of = max(of, f.OF)
			if k == s {
				of = max(of, f.A+f.OF-st.A)
			} else {
				of = max(of, c.Stage(k-1).A+f.A+f.OF-st.A)
			}
		}
		for k := e; k >= s; k-- {
			f := c.Stage(k)
			// B^k holds δ^k (δ^e replaced), the ā^j, j ≤ k (those after k consumed), and
			// allocates δ^{k-1} and o_b^k; the coarse B holds δ^e and ā and allocates δ^{s-1}.
			ob = max(ob, f.Delta-st.Delta-after+c.SizeDelta(k-1)+f.OB-c.SizeDelta(s-1))
			after += f.ABar
		}
		st.OF, st.OB = of, ob
		out.Chain.Stages = append(out.Chain.Stages, st)
		s = e + 1
	}
	out.Starts = append(out.Starts, n+1)
	return out, nil
}

// Expand writes a sequence of the coarse chain as one of the fine chain: F_ck of a
// super-stage as F_ck^s F_∅^{s+1} … F_∅^e, F_∅ as F_∅^s … F_∅^e, F_all as F_all^s … F_all^e and B
// as B^e … B^s.
func (co *Coarse) Expand(seq schedule.Sequence) schedule.Sequence {
	var out schedule.Sequence
	for _, op := range seq {
		s, e := co.Starts[op.Stage-1], co.Starts[op.Stage]-1
		switch op.Kind {
		case schedule.Fck:
			out = append(out, schedule.Op{Kind: schedule.Fck, Stage: s})
			for k := s + 1; k <= e; k++ {
				out = append(out, schedule.Op{Kind: schedule.Fn, Stage: k})
			}
		case schedule.Fn, schedule.Fall:
			for k := s; k <= e; k++ {
				out = append(out, schedule.Op{Kind: op.Kind, Stage: k})
			}
		case schedule.B:
			for k := e; k >= s; k-- {
				out = append(out, schedule.Op{Kind: schedule.B, Stage: k})
			}
		default:
			out = append(out, op) // Del: not produced by the DPs
		}
	}
	return out
}
