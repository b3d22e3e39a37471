package schedule

import (
	"fmt"
	"strconv"
	"strings"
)

// Part is one interval of a chain placed on one GPU in pipelined model parallelism (SPEC §7):
// stages First..Last (1-based, First ≤ Last ≤ L) on GPU GPU (0-based). The part whose Last is
// L also runs the loss stage L+1. In a contiguous allocation every GPU holds one part (a
// pipeline stage); in a non-contiguous one (003's ILP, MadPipe, PyTorch's looped placement) a
// GPU may hold several (virtual stages).
type Part struct {
	First int `json:"first"`
	Last  int `json:"last"`
	GPU   int `json:"gpu"`
	// Sequence, when not empty, is the 004 sequence (SPEC §1) every micro-batch runs on this
	// part, in the chain's stage numbers, on the part's own chain: stages First..Last and a
	// loss stage Last+1 — the chain's loss stage on the part that ends at L; on the others a
	// zero-cost stand-in for the next GPU, whose F_all^{Last+1} sends a^Last and whose
	// B^{Last+1} receives δ^Last. Its forward phase — the operations before its first B — is
	// the part's forward F(μ), the rest its backward B(μ) (recomputations included); between
	// the two a micro-batch holds what the forward phase stored. Empty: store everything,
	// F_all^First … F_all^{Last+1} then B^{Last+1} … B^First.
	Sequence Sequence `json:"sequence,omitempty"`
}

// String writes the part as [First–Last]@GPU.
func (p Part) String() string { return fmt.Sprintf("[%d–%d]@%d", p.First, p.Last, p.GPU) }

// Action is one operation of a GPU in a pipeline: the forward or the backward of micro-batch
// MicroBatch (0-based) on part Part (an index into Pipeline.Parts). PyTorch's action IR writes
// it STAGE F|B MICROBATCH, e.g. 2F0 (torch.distributed.pipelining _Action); Action's text form
// is the same.
type Action struct {
	Part       int
	Backward   bool
	MicroBatch int
}

// String writes the action in PyTorch's form: 1F0, 1B3.
func (a Action) String() string {
	k := "F"
	if a.Backward {
		k = "B"
	}
	return strconv.Itoa(a.Part) + k + strconv.Itoa(a.MicroBatch)
}

// MarshalText writes the action as String does, so that an action list reads as in PyTorch.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads PARTkMICROBATCH with k = F or B (e.g. "0F3").
func (a *Action) UnmarshalText(b []byte) error {
	s := string(b)
	i := strings.IndexAny(s, "FB")
	if i <= 0 || i == len(s)-1 {
		return fmt.Errorf("schedule: action %q is not PART F|B MICROBATCH (e.g. 0F3)", s)
	}
	part, err1 := strconv.Atoi(s[:i])
	mb, err2 := strconv.Atoi(s[i+1:])
	if err1 != nil || err2 != nil || part < 0 || mb < 0 {
		return fmt.Errorf("schedule: action %q is not PART F|B MICROBATCH with non-negative integers (e.g. 0F3)", s)
	}
	*a = Action{Part: part, Backward: s[i] == 'B', MicroBatch: mb}
	return nil
}

// Pipeline is a plan of pipelined model parallelism (SPEC §7): the chain cut into Parts, in
// chain order (Parts[0].First = 1, Parts[i+1].First = Parts[i].Last+1, the last Last = L), and,
// optionally, each GPU's order of actions (Actions[g] for GPU g). Without Actions the order is
// the instance's named schedule (GPipe or 1F1B; the looped breadth-first order when a GPU
// holds several parts).
type Pipeline struct {
	Parts   []Part     `json:"parts"`
	Actions [][]Action `json:"actions,omitempty"`
}

// GPUs returns 1 + the largest GPU index of the parts (0 without parts).
func (p *Pipeline) GPUs() int {
	n := 0
	for _, pt := range p.Parts {
		n = max(n, pt.GPU+1)
	}
	return n
}

// Contiguous reports whether the parts are one per GPU on GPUs 0, 1, … in chain order: the
// contiguous allocations of SPEC §7.
func (p *Pipeline) Contiguous() bool {
	for i, pt := range p.Parts {
		if pt.GPU != i {
			return false
		}
	}
	return true
}

// Intervals returns each part's [First, Last].
func (p *Pipeline) Intervals() [][2]int {
	out := make([][2]int, len(p.Parts))
	for i, pt := range p.Parts {
		out[i] = [2]int{pt.First, pt.Last}
	}
	return out
}

// Cuts returns each part's last stage.
func (p *Pipeline) Cuts() []int {
	cuts := make([]int, len(p.Parts))
	for i, pt := range p.Parts {
		cuts[i] = pt.Last
	}
	return cuts
}

// NewContiguous returns the contiguous pipeline whose GPU k holds stages cuts[k-1]+1..cuts[k]
// (cuts[-1] = 0): cuts are the last stages of the parts, increasing, the last one L. It panics
// on cuts that are not increasing and positive (a programmer error).
func NewContiguous(cuts []int) *Pipeline {
	p := &Pipeline{Parts: make([]Part, len(cuts))}
	first := 1
	for k, e := range cuts {
		if e < first {
			panic("schedule: NewContiguous: cuts must be increasing and positive")
		}
		p.Parts[k] = Part{First: first, Last: e, GPU: k}
		first = e + 1
	}
	return p
}

// Clone returns a deep copy of p.
func (p *Pipeline) Clone() *Pipeline {
	q := &Pipeline{Parts: make([]Part, len(p.Parts))}
	for i, pt := range p.Parts {
		q.Parts[i] = pt
		q.Parts[i].Sequence = append(Sequence(nil), pt.Sequence...)
	}
	if p.Actions != nil {
		q.Actions = make([][]Action, len(p.Actions))
		for g, as := range p.Actions {
			q.Actions[g] = append([]Action(nil), as...)
		}
	}
	return q
}

// String writes the parts, e.g. "[1–2]@0 [3–4]@1".
func (p *Pipeline) String() string {
	parts := make([]string, len(p.Parts))
	for i, pt := range p.Parts {
		parts[i] = pt.String()
	}
	return strings.Join(parts, " ")
}
