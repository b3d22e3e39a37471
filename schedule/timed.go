package schedule

import "fmt"

// TimedOp is one compute operation of an activation-offloading schedule (001, SPEC §2): F_Index
// or, when Backward, B_Index, started at Start seconds.
type TimedOp struct {
	Backward bool    `json:"backward"`
	Index    int     `json:"index"`
	Start    float64 `json:"start"`
}

// String writes the operation as F3@0.5 or B3@2.
func (o TimedOp) String() string {
	k := "F"
	if o.Backward {
		k = "B"
	}
	return fmt.Sprintf("%s%d@%g", k, o.Index, o.Start)
}

// ActTransfer moves activation x_Index over the GPU–CPU link (one transfer at a time, 001 (B)),
// starting at Start seconds; it lasts |x_Index|/β (001 (C)). Kind is Offload or Prefetch
// (Upload has no meaning for activations).
type ActTransfer struct {
	Kind  TransferKind `json:"kind"`
	Index int          `json:"index"`
	Start float64      `json:"start"`
}

// String writes the transfer as off3@0.5 or pre3@2.
func (t ActTransfer) String() string {
	return fmt.Sprintf("%.3s%d@%g", t.Kind, t.Index, t.Start)
}

// Timed is an explicit activation-offloading schedule: the compute operations in execution
// order (F_0..F_L, B_L..B_0) and the transfers, each with its start time.
type Timed struct {
	Ops       []TimedOp     `json:"ops"`
	Transfers []ActTransfer `json:"transfers"`
}
