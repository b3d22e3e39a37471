package schedule

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The plain text formats of schedules (docs/verify.md), for schedules made by other tools.
// Both are line oriented; '#' starts a comment; blank lines are ignored; errors name the line.

// ParseSequenceText reads a rematerialization sequence: operations written as in 004,
// KIND^STAGE (Fall^3, Fck^1, Fn^2, B^3, Del^2), any number per line, separated by spaces or
// commas.
func ParseSequenceText(r io.Reader) (Sequence, error) {
	seq := Sequence{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		for _, tok := range strings.FieldsFunc(text, func(c rune) bool { return c == ' ' || c == '\t' || c == ',' }) {
			kind, stage, ok := strings.Cut(tok, "^")
			if !ok {
				return nil, fmt.Errorf("schedule: line %d: %q is not KIND^STAGE (e.g. Fck^3)", line, tok)
			}
			k, err := ParseOpKind(kind)
			if err != nil {
				return nil, fmt.Errorf("schedule: line %d: %w", line, err)
			}
			l, err := strconv.Atoi(stage)
			if err != nil {
				return nil, fmt.Errorf("schedule: line %d: stage %q of %q is not an integer", line, stage, tok)
			}
			seq = append(seq, Op{Kind: k, Stage: l})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("schedule: line %d: %w", line+1, err)
	}
	return seq, nil
}

// ParsePeriodicText reads a periodic weight-offloading schedule for L layers. Statements:
//
//	period SECONDS
//	op F|B LAYER START            (every F_i and B_i exactly once)
//	transfer offload|upload|prefetch LAYER START
//	delete LAYER TIME
//	resident LAYER...             (w_i on the GPU at time 0; default: none)
//	cpu-valid LAYER...            (the CPU holds the current w_i at time 0; default: none)
//
// Layers are 1-based, times in seconds.
func ParsePeriodicText(r io.Reader, L int) (*Periodic, error) {
	if L < 1 {
		panic("schedule: ParsePeriodicText needs L ≥ 1")
	}
	s := &Periodic{Period: math.NaN(), OpStart: make([]float64, 2*L), Transfers: []Transfer{}, Deletes: []Delete{},
		Resident: make([]bool, L+1), CPUValid: make([]bool, L+1)}
	seen := make([]int, 2*L) // line where each operation was given
	sc := bufio.NewScanner(r)
	line := 0
	errf := func(format string, args ...any) error {
		return fmt.Errorf("schedule: line %d: "+format, append([]any{line}, args...)...)
	}
	layer := func(tok string) (int, error) {
		i, err := strconv.Atoi(tok)
		if err != nil || i < 1 || i > L {
			return 0, errf("layer %q is not in 1..%d", tok, L)
		}
		return i, nil
	}
	num := func(tok, what string) (float64, error) {
		x, err := strconv.ParseFloat(tok, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, errf("%s %q is not a finite number", what, tok)
		}
		return x, nil
	}
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		want := map[string]int{"period": 2, "op": 4, "transfer": 4, "delete": 3}
		if n, ok := want[f[0]]; ok && len(f) != n {
			return nil, errf("%q takes %d fields, got %d", f[0], n-1, len(f)-1)
		}
		switch f[0] {
		case "period":
			x, err := num(f[1], "period")
			if err != nil {
				return nil, err
			}
			s.Period = x
		case "op":
			if f[1] != "F" && f[1] != "B" {
				return nil, errf("operation %q is not F or B", f[1])
			}
			i, err := layer(f[2])
			if err != nil {
				return nil, err
			}
			t, err := num(f[3], "start")
			if err != nil {
				return nil, err
			}
			j := PeriodicIndex(L, i, f[1] == "B")
			if seen[j] != 0 {
				return nil, errf("%s %d is already given on line %d", f[1], i, seen[j])
			}
			seen[j], s.OpStart[j] = line, t
		case "transfer":
			var k TransferKind
			if err := k.UnmarshalText([]byte(f[1])); err != nil {
				return nil, errf("%v", err)
			}
			i, err := layer(f[2])
			if err != nil {
				return nil, err
			}
			t, err := num(f[3], "start")
			if err != nil {
				return nil, err
			}
			s.Transfers = append(s.Transfers, Transfer{Layer: i, Kind: k, Start: t})
		case "delete":
			i, err := layer(f[1])
			if err != nil {
				return nil, err
			}
			t, err := num(f[2], "time")
			if err != nil {
				return nil, err
			}
			s.Deletes = append(s.Deletes, Delete{Layer: i, Time: t})
		case "resident", "cpu-valid":
			dst := s.Resident
			if f[0] == "cpu-valid" {
				dst = s.CPUValid
			}
			for _, tok := range f[1:] {
				i, err := layer(tok)
				if err != nil {
					return nil, err
				}
				dst[i] = true
			}
		default:
			return nil, errf("unknown statement %q (want period, op, transfer, delete, resident or cpu-valid)", f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if math.IsNaN(s.Period) {
		return nil, fmt.Errorf("schedule: no period statement")
	}
	for j, l := range seen {
		if l == 0 {
			i, b := PeriodicOp(L, j)
			kind := "F"
			if b {
				kind = "B"
			}
			return nil, fmt.Errorf("schedule: operation %s %d is missing (every F_i and B_i needs an op line)", kind, i)
		}
	}
	return s, nil
}

// WritePeriodicText writes s in the format ParsePeriodicText reads.
func WritePeriodicText(w io.Writer, s *Periodic) error {
	L := len(s.OpStart) / 2
	b := &strings.Builder{}
	fmt.Fprintf(b, "period %.17g\n", s.Period)
	for j, t := range s.OpStart {
		i, back := PeriodicOp(L, j)
		kind := "F"
		if back {
			kind = "B"
		}
		fmt.Fprintf(b, "op %s %d %.17g\n", kind, i, t)
	}
	for _, tr := range s.Transfers {
		fmt.Fprintf(b, "transfer %v %d %.17g\n", tr.Kind, tr.Layer, tr.Start)
	}
	for _, d := range s.Deletes {
		fmt.Fprintf(b, "delete %d %.17g\n", d.Layer, d.Time)
	}
	for _, st := range []struct {
		name string
		v    []bool
	}{{"resident", s.Resident}, {"cpu-valid", s.CPUValid}} {
		b.WriteString(st.name)
		for i := 1; i < len(st.v); i++ {
			if st.v[i] {
				fmt.Fprintf(b, " %d", i)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ParseTimedText reads an activation-offloading schedule (001, SPEC §2), one statement per
// line, kept in file order (the validator checks the order F_0 … F_L, B_L … B_0):
//
//	op F|B INDEX START                      (operation F_INDEX or B_INDEX, 0-based)
//	transfer offload|prefetch INDEX START   (activation x_INDEX)
func ParseTimedText(r io.Reader) (*Timed, error) {
	s := &Timed{Ops: []TimedOp{}, Transfers: []ActTransfer{}}
	sc := bufio.NewScanner(r)
	line := 0
	errf := func(format string, args ...any) error {
		return fmt.Errorf("schedule: line %d: "+format, append([]any{line}, args...)...)
	}
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if f[0] != "op" && f[0] != "transfer" {
			return nil, errf("unknown statement %q (want op or transfer)", f[0])
		}
		if len(f) != 4 {
			return nil, errf("%q takes 3 fields, got %d", f[0], len(f)-1)
		}
		i, err := strconv.Atoi(f[2])
		if err != nil || i < 0 {
			return nil, errf("index %q is not an integer ≥ 0", f[2])
		}
		t, err := strconv.ParseFloat(f[3], 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, errf("start %q is not a finite number", f[3])
		}
		if f[0] == "op" {
			if f[1] != "F" && f[1] != "B" {
				return nil, errf("operation %q is not F or B", f[1])
			}
			s.Ops = append(s.Ops, TimedOp{Backward: f[1] == "B", Index: i, Start: t})
			continue
		}
		var k TransferKind
		if err := k.UnmarshalText([]byte(f[1])); err != nil || k == Upload {
			return nil, errf("transfer kind %q is not offload or prefetch", f[1])
		}
		s.Transfers = append(s.Transfers, ActTransfer{Kind: k, Index: i, Start: t})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return s, nil
}

// WriteTimedText writes s in the format ParseTimedText reads.
func WriteTimedText(w io.Writer, s *Timed) error {
	b := &strings.Builder{}
	for _, o := range s.Ops {
		k := "F"
		if o.Backward {
			k = "B"
		}
		fmt.Fprintf(b, "op %s %d %.17g\n", k, o.Index, o.Start)
	}
	for _, t := range s.Transfers {
		fmt.Fprintf(b, "transfer %v %d %.17g\n", t.Kind, t.Index, t.Start)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
