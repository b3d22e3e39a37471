package schedule

import (
	"encoding/json"
	"fmt"
	"strings"
)

// OpKind is the kind of a rematerialization operation (004 Table 1).
type OpKind int

const (
	// Fall is F_all^ℓ: keeps a^{ℓ-1} (or ā^{ℓ-1}) and adds ā^ℓ.
	Fall OpKind = iota
	// Fck is F_ck^ℓ: keeps a^{ℓ-1} (or ā^{ℓ-1}) and adds a^ℓ.
	Fck
	// Fn is F_∅^ℓ: replaces a plain a^{ℓ-1} by a^ℓ.
	Fn
	// B is B^ℓ: consumes δ^ℓ, ā^ℓ and a plain a^{ℓ-1}; produces δ^{ℓ-1}.
	B
	// Del drops the stored activation of stage ℓ (a^ℓ or ā^ℓ, 0 ≤ ℓ ≤ L+1) at no cost. It is
	// not an operation of 004's model: only the free-delete variant of SPEC §1 (PyTorch's
	// `del`) allows it.
	Del
)

var opNames = [...]string{Fall: "Fall", Fck: "Fck", Fn: "Fn", B: "B", Del: "Del"}

// String returns the JSON name of k ("Fall", "Fck", "Fn", "B").
func (k OpKind) String() string {
	if k < 0 || int(k) >= len(opNames) {
		return fmt.Sprintf("OpKind(%d)", int(k))
	}
	return opNames[k]
}

// ParseOpKind parses a JSON operation name.
func ParseOpKind(s string) (OpKind, error) {
	for i, n := range opNames {
		if n == s {
			return OpKind(i), nil
		}
	}
	return 0, fmt.Errorf("schedule: unknown operation %q (want Fall, Fck, Fn, B or Del)", s)
}

// Op is one operation of a sequence: a kind applied to stage ℓ (1-based, 1 ≤ ℓ ≤ L+1).
type Op struct {
	Kind  OpKind
	Stage int
}

// String writes the operation as in 004, e.g. "Fck^3", "B^2".
func (o Op) String() string { return fmt.Sprintf("%s^%d", o.Kind, o.Stage) }

type opJSON struct {
	Op    string `json:"op"`
	Stage int    `json:"stage"`
}

// MarshalJSON writes {"op":"Fck","stage":1}.
func (o Op) MarshalJSON() ([]byte, error) {
	return json.Marshal(opJSON{Op: o.Kind.String(), Stage: o.Stage})
}

// UnmarshalJSON reads {"op":"Fck","stage":1}.
func (o *Op) UnmarshalJSON(b []byte) error {
	var j opJSON
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("schedule: operation %s: %w", b, err)
	}
	k, err := ParseOpKind(j.Op)
	if err != nil {
		return err
	}
	*o = Op{Kind: k, Stage: j.Stage}
	return nil
}

// Sequence is a rematerialization schedule: operations run one after the other on the GPU.
type Sequence []Op

// String writes the sequence as space-separated operations.
func (s Sequence) String() string {
	parts := make([]string, len(s))
	for i, o := range s {
		parts[i] = o.String()
	}
	return strings.Join(parts, " ")
}
