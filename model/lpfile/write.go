// Package lpfile writes models in CPLEX LP format, as read by CPLEX, Gurobi, HiGHS, CBC and
// GLPK (glpsol --lp).
//
// Conventions: "Minimize"/"Maximize", "Subject To", "Bounds", "Generals", "Binaries", "End";
// the objective constant c₀ as a constant term; a ranged row lo ≤ aᵀx ≤ hi as two rows
// "name_lo: aᵀx >= lo" and "name_hi: aᵀx <= hi" (not every reader accepts double inequalities);
// a free row as "name: aᵀx >= -inf"; an empty row as a zero term on the first column; the
// objective lists every column, "+ 0 x" for a zero cost, so that the column order (readers number
// variables by first appearance) and columns in no row survive write → read. Lines are wrapped so
// that none exceeds 255 characters. Names are made legal and unique deterministically: characters
// outside [A-Za-z0-9_.] become '_'; a name that starts with a digit, a '.', an 'e'/'E' followed
// by a digit, or with inf or nan in any case (HiGHS 1.15 reads such a name as a number), or that
// is a keyword of the format, gets a '_' prefix; a clash gets "_2", "_3", … Numbers are written
// in shortest round-trip form.
package lpfile

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/memsched/memsched/model"
)

// reserved holds the words that cannot be names (compared in lower case): the section keywords
// of every LP reader memsched knows, the first words of two-word sections, and the words of
// bounds.
var reserved = map[string]bool{
	"st": true, "s.t.": true, "st.": true, "subject": true, "to": true, "such": true, "that": true,
	"bound": true, "bounds": true, "bin": true, "binary": true, "binaries": true,
	"gen": true, "general": true, "generals": true, "integer": true, "integers": true,
	"end": true, "free": true, "inf": true, "infinity": true, "min": true, "max": true,
	"minimize": true, "maximize": true, "minimise": true, "maximise": true, "minimum": true, "maximum": true,
	"semi": true, "semis": true, "semi-continuous": true, "sos": true, "obj": true,
	"lazy": true, "user": true,
}

const lineLimit = 240

// Write writes m in CPLEX LP format. It fails if m does not validate.
func Write(w io.Writer, m *model.Model) error {
	if err := m.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	n, r := m.NumVars(), m.NumRows()
	taken := map[string]bool{}
	cols := make([]string, n)
	for j := range cols {
		cols[j] = legal(m.VarName(model.Var(j)), taken)
	}
	if m.Name != "" {
		bw.WriteString("\\ Problem name: " + strings.Join(strings.Fields(m.Name), " ") + "\n")
	}
	for _, c := range m.Comments {
		bw.WriteString("\\ " + strings.Join(strings.Fields(c), " ") + "\n")
	}
	sense, cost, offset := m.Objective()
	if sense == model.Maximize {
		bw.WriteString("Maximize\n")
	} else {
		bw.WriteString("Minimize\n")
	}
	lw := &lineWriter{w: bw}
	lw.start(" obj:")
	// Every column is listed, zero costs included: a reader numbers variables in order of first
	// appearance, so this keeps the column order (and columns in no row) on write → read.
	for j, c := range cost {
		lw.term(c, cols[j])
	}
	if offset != 0 {
		lw.num(offset)
	}
	lw.end("")
	bw.WriteString("Subject To\n")
	for i := 0; i < r; i++ {
		lo, hi := m.RowBounds(i)
		name := m.RowName(i)
		idx, coefs := m.RowTerms(i)
		body := func(label, tail string) {
			lw.start(" " + legal(label, taken) + ":")
			for k, j := range idx {
				lw.term(coefs[k], cols[j])
			}
			if len(idx) == 0 {
				lw.term(0, cols[0])
			}
			lw.end(tail)
		}
		switch {
		case lo == hi:
			body(name, " = "+num(lo))
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			body(name, " >= -inf")
		case math.IsInf(lo, -1):
			body(name, " <= "+num(hi))
		case math.IsInf(hi, 1):
			body(name, " >= "+num(lo))
		default:
			body(name+"_lo", " >= "+num(lo))
			body(name+"_hi", " <= "+num(hi))
		}
	}
	bw.WriteString("Bounds\n")
	var gens, bins []string
	for j := 0; j < n; j++ {
		v := model.Var(j)
		lb, ub := m.Bounds(v)
		t := m.VarType(v)
		switch t {
		case model.Binary:
			bins = append(bins, cols[j])
			if lb == 0 && ub == 1 {
				continue
			}
		case model.Integer:
			gens = append(gens, cols[j])
		}
		switch {
		case lb == ub:
			bw.WriteString(" " + cols[j] + " = " + num(lb) + "\n")
		case math.IsInf(lb, -1) && math.IsInf(ub, 1):
			bw.WriteString(" " + cols[j] + " free\n")
		case lb == 0 && math.IsInf(ub, 1):
		case math.IsInf(ub, 1):
			bw.WriteString(" " + cols[j] + " >= " + num(lb) + "\n")
		default:
			bw.WriteString(" " + bound(lb) + " <= " + cols[j] + " <= " + num(ub) + "\n")
		}
	}
	for _, sec := range []struct {
		title string
		names []string
	}{{"Generals", gens}, {"Binaries", bins}} {
		if len(sec.names) == 0 {
			continue
		}
		bw.WriteString(sec.title + "\n")
		lw.start("")
		for _, s := range sec.names {
			lw.word(s)
		}
		lw.end("")
	}
	bw.WriteString("End\n")
	return bw.Flush()
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func bound(x float64) string {
	if math.IsInf(x, -1) {
		return "-inf"
	}
	return num(x)
}

// lineWriter writes space-separated items, wrapping lines before lineLimit characters.
type lineWriter struct {
	w   *bufio.Writer
	col int
}

func (l *lineWriter) start(head string) {
	l.w.WriteString(head)
	l.col = len(head)
}

func (l *lineWriter) word(s string) {
	if l.col+1+len(s) > lineLimit {
		l.w.WriteString("\n ")
		l.col = 1
	}
	l.w.WriteString(" " + s)
	l.col += 1 + len(s)
}

func (l *lineWriter) term(c float64, name string) {
	sign := "+"
	if c < 0 || c == 0 && math.Signbit(c) {
		sign, c = "-", -c
	}
	l.word(sign + " " + num(c) + " " + name)
}

func (l *lineWriter) num(c float64) {
	if c < 0 {
		l.word("- " + num(-c))
	} else {
		l.word("+ " + num(c))
	}
}

func (l *lineWriter) end(tail string) {
	if l.col+len(tail) > lineLimit {
		l.w.WriteString("\n ")
	}
	l.w.WriteString(tail + "\n")
	l.col = 0
}

// legal makes name a legal, unused LP name and records it in taken.
func legal(name string, taken map[string]bool) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	s := string(b)
	low := strings.ToLower(s)
	// A name must not read as a number: not start with a digit or a '.', nor with e/E and a
	// digit (2 e1 would not survive a writer that drops the space), nor with inf or nan, which
	// HiGHS 1.15 reads as a number (its reader tries strtod on every token: inflow is inf
	// followed by low, and the file is refused).
	if s == "" || s[0] >= '0' && s[0] <= '9' || s[0] == '.' ||
		(s[0] == 'e' || s[0] == 'E') && len(s) > 1 && (s[1] >= '0' && s[1] <= '9') ||
		strings.HasPrefix(low, "inf") || strings.HasPrefix(low, "nan") || reserved[low] {
		s = "_" + s
	}
	if len(s) > 200 {
		s = s[:200]
	}
	base := s
	for k := 2; taken[s]; k++ {
		s = base + "_" + strconv.Itoa(k)
	}
	taken[s] = true
	return s
}
