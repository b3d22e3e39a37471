package schedule

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Tensor names a stored activation: a^ℓ (Full false) or ā^ℓ (Full true), 0 ≤ ℓ ≤ L+1.
type Tensor struct {
	Stage int
	Full  bool
}

// String writes a^3 or ā^3.
func (t Tensor) String() string {
	if t.Full {
		return fmt.Sprintf("ā^%d", t.Stage)
	}
	return fmt.Sprintf("a^%d", t.Stage)
}

// CombinedOp is one operation of the compute stream of a Combined schedule: a 004 operation,
// the transfers it waits for (indices into Transfers: it starts only once each has ended),
// and its start time as the validator computes it (informative in files).
type CombinedOp struct {
	Op
	Wait  []int
	Start float64
}

type combinedOpJSON struct {
	Op    string  `json:"op"`
	Stage int     `json:"stage"`
	Wait  []int   `json:"wait,omitempty"`
	Start float64 `json:"start"`
}

// MarshalJSON writes {"op":"Fck","stage":1,"wait":[0],"start":0.5}.
func (o CombinedOp) MarshalJSON() ([]byte, error) {
	return json.Marshal(combinedOpJSON{Op: o.Kind.String(), Stage: o.Stage, Wait: o.Wait, Start: o.Start})
}

// UnmarshalJSON reads {"op":"Fck","stage":1,"wait":[0]} ("start" optional).
func (o *CombinedOp) UnmarshalJSON(b []byte) error {
	var j combinedOpJSON
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("schedule: operation %s: %w", b, err)
	}
	k, err := ParseOpKind(j.Op)
	if err != nil {
		return err
	}
	*o = CombinedOp{Op: Op{Kind: k, Stage: j.Stage}, Wait: j.Wait, Start: j.Start}
	return nil
}

// CombinedTransfer is one transfer of the link stream of a Combined schedule: Offload (copy
// the tensor to the CPU; it leaves the GPU when the copy has ended and its readers have ended)
// or Prefetch (bring it back; its memory is reserved from the start). It starts once the link
// is free (the previous transfer has ended) and compute operation After has ended (-1: no
// such condition); it lasts |tensor|/β.
type CombinedTransfer struct {
	Kind   TransferKind
	Tensor Tensor
	After  int
	Start  float64
}

type combinedTransferJSON struct {
	Kind   TransferKind `json:"kind"`
	Tensor string       `json:"tensor"`
	Stage  int          `json:"stage"`
	After  int          `json:"after"`
	Start  float64      `json:"start"`
}

// MarshalJSON writes {"kind":"offload","tensor":"a","stage":0,"after":-1,"start":0}.
func (t CombinedTransfer) MarshalJSON() ([]byte, error) {
	name := "a"
	if t.Tensor.Full {
		name = "abar"
	}
	return json.Marshal(combinedTransferJSON{Kind: t.Kind, Tensor: name, Stage: t.Tensor.Stage, After: t.After, Start: t.Start})
}

// UnmarshalJSON reads a transfer ("start" optional, "after" required).
func (t *CombinedTransfer) UnmarshalJSON(b []byte) error {
	j := combinedTransferJSON{After: -2}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("schedule: transfer %s: %w", b, err)
	}
	if j.After == -2 {
		return fmt.Errorf("schedule: transfer %s: \"after\" is required (-1: no compute dependency)", b)
	}
	if j.Kind != Offload && j.Kind != Prefetch {
		return fmt.Errorf("schedule: transfer %s: kind must be offload or prefetch", b)
	}
	var full bool
	switch j.Tensor {
	case "a":
	case "abar":
		full = true
	default:
		return fmt.Errorf("schedule: transfer %s: tensor %q (want a or abar)", b, j.Tensor)
	}
	*t = CombinedTransfer{Kind: j.Kind, Tensor: Tensor{Stage: j.Stage, Full: full}, After: j.After, Start: j.Start}
	return nil
}

// String writes off(a^0)@0.5 or pre(ā^2)@3.
func (t CombinedTransfer) String() string {
	return fmt.Sprintf("%.3s(%v)@%g", t.Kind, t.Tensor, t.Start)
}

// Combined is a schedule of rematerialization and activation offloading together (003,
// SPEC §6) in the form a framework executes: a compute stream running Ops in order (a 004
// sequence), and one link running Transfers in order, one at a time, each transfer moving a
// whole activation. The streams synchronize only through the dependencies: an operation starts
// when the previous one has ended and every transfer in its Wait has ended; a transfer when
// the previous transfer has ended and operation After has ended. Start times follow from
// these rules (verify/combined computes them exactly); they are written out for reading.
type Combined struct {
	Ops       []CombinedOp       `json:"ops"`
	Transfers []CombinedTransfer `json:"transfers"`
}

// Sequence returns the compute stream as a 004 sequence.
func (s *Combined) Sequence() Sequence {
	seq := make(Sequence, len(s.Ops))
	for i, o := range s.Ops {
		seq[i] = o.Op
	}
	return seq
}

// CombinedSegment is one top-level segment of the first forward pass of a plan of the
// combined class (SPEC §6): stages Start..End run either as F_all^Start alone (All, End =
// Start; the next segment's input is ā^Start) or as F_ck^Start F_∅^{Start+1} … F_∅^End (the
// next input is a^End). Offload says that the segment's input (a^0 for the first) leaves the
// GPU after its first forward and comes back before the segment's backward part. Backward is
// that part for an F_ck segment: a persistent sequence of stages Start..End run with the input
// stored and δ^End held (nil for an F_all segment, whose backward part is B^Start).
type CombinedSegment struct {
	Start    int      `json:"start"`
	End      int      `json:"end"`
	All      bool     `json:"all"`
	Offload  bool     `json:"offload"`
	Backward Sequence `json:"backward,omitempty"`
}

// CombinedPlan is a schedule of the combined class in decisions: the top-level segments of
// the first forward pass over stages 1..L (the loss stage L+1 excluded) and whether the loss
// stage's input is offloaded too. Its compute stream (Ops) is each segment's forward steps,
// F_all^{L+1}, B^{L+1}, then each segment's backward part, last segment first.
type CombinedPlan struct {
	Segments    []CombinedSegment `json:"segments"`
	OffloadLoss bool              `json:"offload_loss,omitempty"`
}

// Forward returns the segment's forward steps.
func (g CombinedSegment) Forward() Sequence {
	if g.All {
		return Sequence{{Kind: Fall, Stage: g.Start}}
	}
	seq := Sequence{{Kind: Fck, Stage: g.Start}}
	for j := g.Start + 1; j <= g.End; j++ {
		seq = append(seq, Op{Kind: Fn, Stage: j})
	}
	return seq
}

// BackwardOps returns the segment's backward part (B^Start for an F_all segment).
func (g CombinedSegment) BackwardOps() Sequence {
	if g.All {
		return Sequence{{Kind: B, Stage: g.Start}}
	}
	return g.Backward
}

// Input returns the segment's input tensor: a^0 for the segment starting at stage 1, else
// the output of the previous segment (prev), ā^{s-1} after an F_all segment, a^{s-1} after an
// F_ck one.
func (g CombinedSegment) Input(prev *CombinedSegment) Tensor {
	if prev == nil {
		return Tensor{Stage: g.Start - 1}
	}
	return Tensor{Stage: g.Start - 1, Full: prev.All}
}

// LossInput returns the loss stage's input: the output of the last segment.
func (p *CombinedPlan) LossInput() Tensor {
	if len(p.Segments) == 0 {
		return Tensor{}
	}
	last := p.Segments[len(p.Segments)-1]
	return Tensor{Stage: last.End, Full: last.All}
}

// Ops returns the plan's compute stream (n = L+1 stages, the loss last).
func (p *CombinedPlan) Ops(n int) Sequence {
	var seq Sequence
	for _, g := range p.Segments {
		seq = append(seq, g.Forward()...)
	}
	seq = append(seq, Op{Kind: Fall, Stage: n}, Op{Kind: B, Stage: n})
	for k := len(p.Segments) - 1; k >= 0; k-- {
		seq = append(seq, p.Segments[k].BackwardOps()...)
	}
	return seq
}

// Offloaded returns the number of tensors the plan offloads.
func (p *CombinedPlan) Offloaded() int {
	n := 0
	for _, g := range p.Segments {
		if g.Offload {
			n++
		}
	}
	if p.OffloadLoss {
		n++
	}
	return n
}

// String writes the plan's forward segments, the loss stage and the backward parts, e.g.
// "Off(a^0) Fck^1 · Fall^2 | Fall^{L+1} B^{L+1} | B^2 · Fall^1 B^1" (segments separated by ·).
func (p *CombinedPlan) String() string {
	var parts []string
	prev := (*CombinedSegment)(nil)
	for i := range p.Segments {
		g := p.Segments[i]
		s := g.Forward().String()
		if g.Offload {
			s = fmt.Sprintf("Off(%v) %s", g.Input(prev), s)
		}
		parts = append(parts, s)
		prev = &p.Segments[i]
	}
	loss := "Fall^{L+1} B^{L+1}"
	if p.OffloadLoss {
		loss = fmt.Sprintf("Off(%v) %s", p.LossInput(), loss)
	}
	var back []string
	for k := len(p.Segments) - 1; k >= 0; k-- {
		back = append(back, p.Segments[k].BackwardOps().String())
	}
	return strings.Join(parts, " · ") + " | " + loss + " | " + strings.Join(back, " · ")
}

// PlanOf reads a sequence of the combined class's compute stream on n stages (the loss stage
// n last) back into a plan with nothing offloaded: the inverse of CombinedPlan.Ops. Every
// persistent sequence of 004 (rotor's C_MP) has this form: its top-level forward steps, then
// F_all^n B^n, then the backward parts. It returns an error naming the operation where seq
// leaves that form.
func PlanOf(n int, seq Sequence) (*CombinedPlan, error) {
	p := &CombinedPlan{}
	i := 0
	next := 1
	for next < n {
		if i >= len(seq) {
			return nil, fmt.Errorf("schedule: the sequence ends in the forward pass at stage %d", next)
		}
		op := seq[i]
		switch {
		case op == Op{Kind: Fall, Stage: next}:
			p.Segments = append(p.Segments, CombinedSegment{Start: next, End: next, All: true})
			i++
			next++
		case op == Op{Kind: Fck, Stage: next}:
			e := next
			i++
			for i < len(seq) && seq[i] == (Op{Kind: Fn, Stage: e + 1}) && e+1 < n {
				e++
				i++
			}
			p.Segments = append(p.Segments, CombinedSegment{Start: next, End: e})
			next = e + 1
		default:
			return nil, fmt.Errorf("schedule: operation %d (%v): want F_all^%d or F_ck^%d of the first forward pass", i+1, op, next, next)
		}
	}
	if i+1 >= len(seq) || seq[i] != (Op{Kind: Fall, Stage: n}) || seq[i+1] != (Op{Kind: B, Stage: n}) {
		return nil, fmt.Errorf("schedule: operation %d: want F_all^%d B^%d after the forward pass", i+1, n, n)
	}
	i += 2
	for k := len(p.Segments) - 1; k >= 0; k-- {
		g := &p.Segments[k]
		if g.All {
			if i >= len(seq) || seq[i] != (Op{Kind: B, Stage: g.Start}) {
				return nil, fmt.Errorf("schedule: operation %d: want B^%d, the backward of F_all^%d", i+1, g.Start, g.Start)
			}
			i++
			continue
		}
		j := i
		for j < len(seq) && seq[j] != (Op{Kind: B, Stage: g.Start}) {
			j++
		}
		if j == len(seq) {
			return nil, fmt.Errorf("schedule: no B^%d ends the backward part of segment %d..%d", g.Start, g.Start, g.End)
		}
		g.Backward = append(Sequence(nil), seq[i:j+1]...)
		i = j + 1
	}
	if i != len(seq) {
		return nil, fmt.Errorf("schedule: operation %d (%v) after the last backward part", i+1, seq[i])
	}
	return p, nil
}
