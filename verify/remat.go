package verify

import (
	"fmt"

	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// Act is what is stored of activation ℓ: nothing, the plain a^ℓ, or ā^ℓ (everything B^ℓ needs,
// a^ℓ included).
type Act uint8

const (
	None Act = iota
	Plain
	Full
)

// RematState is a memory state of the rematerialization model (SPEC §1, 004 Table 1): which
// activations are stored, and the one gradient δ^T held (T = L+1 at the start, 0 when done;
// in a valid sequence exactly one δ is stored at any time, since B^ℓ consumes δ^ℓ and
// produces δ^{ℓ-1}).
type RematState struct {
	Acts []Act // index 0..L+1
	T    int
	// stored is Σ_ℓ the size of what Acts stores, when known: Apply computes it once and
	// keeps it up to date, so that replaying a sequence costs O(1) per operation instead of
	// O(L) (a 10 000-stage chain's sequential schedules took minutes). A state built as a
	// literal, or whose Acts are changed other than by Apply, has it unknown and recomputed.
	stored int64
	known  bool
}

// InitialState is {a^0, δ^{L+1}}.
func InitialState(c *instances.Chain) RematState {
	s := RematState{Acts: make([]Act, c.Len()+1), T: c.Len()}
	s.Acts[0] = Plain
	return s
}

// Clone returns a copy of s that shares nothing with it (and keeps its stored size, so that
// Memory stays O(1)).
func (s RematState) Clone() RematState {
	s.Acts = append([]Act(nil), s.Acts...)
	return s
}

// Memory returns the bytes stored in s.
func (s RematState) Memory(c *instances.Chain) int64 {
	if s.known {
		return c.SizeDelta(s.T) + s.stored
	}
	return c.SizeDelta(s.T) + s.sumActs(c)
}

// sumActs adds up the sizes of the stored activations.
func (s RematState) sumActs(c *instances.Chain) int64 {
	var m int64
	for l, a := range s.Acts {
		m += actSize(c, l, a)
	}
	return m
}

// set stores a as activation l, keeping stored up to date.
func (s *RematState) set(c *instances.Chain, l int, a Act) {
	s.stored += actSize(c, l, a) - actSize(c, l, s.Acts[l])
	s.Acts[l] = a
}

func actSize(c *instances.Chain, l int, a Act) int64 {
	switch a {
	case Plain:
		return c.SizeA(l)
	case Full:
		if l == 0 {
			return c.A0 // ā^0 does not exist; a^0 is the input
		}
		return c.Stage(l).ABar
	}
	return 0
}

// Apply runs op on s in place and returns the memory used during the operation (everything
// stored + the operation's outputs + its overhead; inputs are freed only when it ends) and its
// duration. It returns an error, leaving s unchanged, when op is not valid in s.
//
// Rules (004 Table 1, SPEC §1; decisions in docs/remat-model.md):
//   - F_ck^ℓ and F_all^ℓ need a^{ℓ-1} or ā^{ℓ-1} and keep it; F_ck adds a^ℓ, F_all adds ā^ℓ.
//   - F_∅^ℓ needs a plain a^{ℓ-1} and replaces it by a^ℓ.
//   - A forward may not recompute what is already stored (a^ℓ or ā^ℓ for F_ck/F_∅, ā^ℓ for
//     F_all); F_all^ℓ over a stored plain a^ℓ replaces it by ā^ℓ (ā includes a), both counted
//     during the operation.
//   - B^ℓ needs δ^ℓ, ā^ℓ and a^{ℓ-1} or ā^{ℓ-1}; it removes δ^ℓ, ā^ℓ and a plain a^{ℓ-1}, keeps a
//     stored ā^{ℓ-1}, and adds δ^{ℓ-1}.
//   - Nothing may run once δ^0 exists.
func (s *RematState) Apply(c *instances.Chain, op schedule.Op) (mem int64, dur float64, err error) {
	if !s.known {
		s.stored, s.known = s.sumActs(c), true
	}
	l := op.Stage
	n := c.Len()
	if op.Kind == schedule.Del {
		if l < 0 || l > n {
			return 0, 0, fmt.Errorf("stage %d out of range 0..%d", l, n)
		}
		if s.Acts[l] == None {
			return 0, 0, fmt.Errorf("nothing of stage %d is stored", l)
		}
		mem = s.Memory(c)
		s.set(c, l, None)
		return mem, 0, nil
	}
	if l < 1 || l > n {
		return 0, 0, fmt.Errorf("stage %d out of range 1..%d", l, n)
	}
	if s.T == 0 {
		return 0, 0, fmt.Errorf("the sequence is already complete (δ^0 exists)")
	}
	st := c.Stage(l)
	base := s.Memory(c)
	prev := s.Acts[l-1]
	switch op.Kind {
	case schedule.Fck, schedule.Fn, schedule.Fall:
		if l > s.T {
			return 0, 0, fmt.Errorf("F^%d is after the current gradient δ^%d: stage %d is already back-propagated", l, s.T, l)
		}
		if prev == None {
			return 0, 0, fmt.Errorf("input a^%d is not stored", l-1)
		}
		if op.Kind == schedule.Fn && prev != Plain {
			return 0, 0, fmt.Errorf("F_∅^%d needs a plain a^%d, but ā^%d is stored", l, l-1, l-1)
		}
		cur := s.Acts[l]
		switch {
		case cur == Full:
			return 0, 0, fmt.Errorf("ā^%d is already stored", l)
		case cur == Plain && op.Kind != schedule.Fall:
			return 0, 0, fmt.Errorf("a^%d is already stored", l)
		}
		out := st.A
		if op.Kind == schedule.Fall {
			out = st.ABar
		}
		mem = base + out + st.OF
		if op.Kind == schedule.Fn {
			s.set(c, l-1, None)
		}
		if op.Kind == schedule.Fall {
			s.set(c, l, Full)
		} else {
			s.set(c, l, Plain)
		}
		return mem, st.UF, nil
	case schedule.B:
		if s.T != l {
			return 0, 0, fmt.Errorf("δ^%d is not stored (the current gradient is δ^%d)", l, s.T)
		}
		if s.Acts[l] != Full {
			return 0, 0, fmt.Errorf("ā^%d is not stored", l)
		}
		if prev == None {
			return 0, 0, fmt.Errorf("input a^%d is not stored", l-1)
		}
		mem = base + c.SizeDelta(l-1) + st.OB
		s.set(c, l, None)
		if prev == Plain {
			s.set(c, l-1, None)
		}
		s.T = l - 1
		return mem, st.UB, nil
	}
	return 0, 0, fmt.Errorf("unknown operation kind %v", op.Kind)
}

// RematOptions selects model variants; the zero value is 004's model.
type RematOptions struct {
	// FreeDelete allows Del operations: any stored activation may be dropped at no cost
	// (SPEC §1's variant, what `del` does in PyTorch). Off by default.
	FreeDelete bool
}

// RematResult is what simulating a valid sequence gives.
type RematResult struct {
	// Makespan is the sum of the operations' durations, in seconds (004 Def. 3.2).
	Makespan float64
	// Peak is the maximum memory over the initial state and every operation, in bytes
	// (004 Def. 3.4; the budget counts everything, a^0 included).
	Peak int64
	// PeakOp is the index of the operation where Peak is first reached (-1: the initial state).
	PeakOp int
}

// InvalidOpError names the first operation that breaks the model and why. Index = len(seq)
// means the sequence ended before producing δ^0.
type InvalidOpError struct {
	Index  int
	Op     schedule.Op
	Reason string
}

func (e *InvalidOpError) Error() string {
	if e.Op == (schedule.Op{}) {
		return fmt.Sprintf("verify: invalid sequence at operation %d: %s", e.Index, e.Reason)
	}
	return fmt.Sprintf("verify: invalid operation %d (%v): %s", e.Index, e.Op, e.Reason)
}

// Remat simulates seq on c (004 §3, SPEC §1) and returns its makespan and peak memory, or an
// *InvalidOpError for the first operation that is not valid or when δ^0 is never produced.
// c must validate: its sizes then total at most instances.MaxBytes, so the memory sums of the
// simulation cannot overflow (a chain that does not is an error, never a wrapped peak).
func Remat(c *instances.Chain, seq schedule.Sequence, opt RematOptions) (RematResult, error) {
	if err := c.Validate(); err != nil {
		return RematResult{}, fmt.Errorf("verify: %w", err)
	}
	s := InitialState(c)
	res := RematResult{Peak: s.Memory(c), PeakOp: -1}
	for i, op := range seq {
		if op.Kind == schedule.Del && !opt.FreeDelete {
			return RematResult{}, &InvalidOpError{Index: i, Op: op, Reason: "Del is only valid in the free-delete variant"}
		}
		mem, dur, err := s.Apply(c, op)
		if err != nil {
			return RematResult{}, &InvalidOpError{Index: i, Op: op, Reason: err.Error()}
		}
		res.Makespan += dur
		if mem > res.Peak {
			res.Peak, res.PeakOp = mem, i
		}
	}
	if s.T != 0 {
		return RematResult{}, &InvalidOpError{Index: len(seq), Reason: fmt.Sprintf("the sequence ends before δ^0 is computed (current gradient δ^%d)", s.T)}
	}
	return res, nil
}
