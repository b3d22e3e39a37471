package mpsfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/memsched/memsched/model"
)

// ParseError is a malformed file, or one with a construct outside memsched's model, with its
// line.
type ParseError = model.ParseError

// unsupported names the sections of MPS extensions that describe something memsched's model
// cannot hold (it is linear, with continuous, integer and binary columns). A file that has one
// is refused: reading it without the section would solve another problem.
var unsupported = map[string]string{
	"QUADOBJ":     "quadratic objective",
	"QMATRIX":     "quadratic objective",
	"QSECTION":    "quadratic objective",
	"QCMATRIX":    "quadratic constraint",
	"CSECTION":    "conic constraint",
	"SOS":         "special ordered sets",
	"SETS":        "special ordered sets",
	"INDICATORS":  "indicator constraints",
	"GENCONS":     "general constraints",
	"PWLOBJ":      "piecewise-linear objective",
	"PWLNAM":      "piecewise-linear constraints",
	"PWLCON":      "piecewise-linear constraints",
	"DELAYEDROWS": "lazy constraints",
	"MODELCUTS":   "lazy constraints (model cuts)",
	"USERCUTS":    "user cuts",
	"OBJNAME":     "objective selection (OBJNAME: memsched takes the first N row; HiGHS ignores the section, CBC refuses it)",
	"BRANCH":      "branching priorities",
}

// sections memsched reads.
var known = map[string]bool{
	"NAME": true, "OBJSENSE": true, "OBJSENCE": true, "ROWS": true, "COLUMNS": true,
	"RHS": true, "RANGES": true, "BOUNDS": true, "ENDATA": true,
}

// Read parses an MPS model in free or fixed format; source names the input in errors. Every
// error is a *ParseError with its line, or (for a model that breaks model.Validate) an error
// naming the row or column.
//
// Sections: NAME, OBJSENSE (MAX/MIN on the same or the next line), ROWS, COLUMNS (with MARKER
// INTORG/INTEND), RHS, RANGES, BOUNDS (UP, LO, FX, FR, MI, PL, BV, LI, UI), ENDATA. The
// conventions — those of HiGHS and CBC where they agree, a ParseError where they do not — are
// documented in docs/modeling.md; in short:
//
//   - a line is a comment only when column 1 holds '*'; names may start with '*' (*RHS*);
//   - a section header starts in column 1 (a line holding only a section keyword is one too);
//   - fields are separated by whitespace; a file that does not read so but has the fixed
//     layout (fields in columns 2-3, 5-12, 15-22, 25-36, 40-47, 50-61, nothing between) is read
//     by column, so that names may hold spaces (Netlib forplan);
//   - the first N row is the objective, its RHS is −c₀; other N rows are free rows, their RHS
//     ignored;
//   - an integer column (between MARKER INTORG and INTEND) without any BOUNDS line is binary;
//   - numbers may use a Fortran exponent (1.0D3);
//   - refused: a duplicate entry (a column twice in a row, a row twice in RHS or RANGES, a
//     bound side set twice — HiGHS keeps the first, CBC refuses), a second RHS, RANGES or
//     BOUNDS set (HiGHS merges them, CBC keeps the first), a negative upper bound on a column
//     whose lower bound is left at 0 (HiGHS: [0, u], infeasible; CBC: (−∞, u]), unknown rows and
//     columns, and the sections and bound types of constructs outside memsched's model
//     (quadratic, conic, SOS, indicator, semi-continuous SC and semi-integer SI, ...).
func Read(rd io.Reader, source string) (*model.Model, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("mpsfile: %s: %w", source, err)
	}
	lines := splitLines(data)
	m, freeErr := parse(lines, source, false)
	if freeErr == nil {
		return m, nil
	}
	var pe *ParseError
	if !errors.As(freeErr, &pe) || !looksFixed(lines) {
		return nil, freeErr
	}
	m, fixedErr := parse(lines, source, true)
	if fixedErr == nil {
		return m, nil
	}
	var fe *ParseError
	if errors.As(fixedErr, &fe) && fe.Line > pe.Line {
		// The fixed-format reading got further: its error is the informative one.
		fe.Msg += " (read as fixed-format MPS)"
		return nil, fe
	}
	return nil, freeErr
}

func splitLines(data []byte) [][]byte {
	lines := bytes.Split(data, []byte{'\n'})
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, "\r")
	}
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	return lines
}

// fixedGaps are the 1-based columns that are blank on every data line of a fixed-format file:
// column 1 and the gaps between the fields 2-3, 5-12, 15-22, 25-36, 40-47 and 50-61.
var fixedGaps = []int{1, 4, 13, 14, 23, 24, 37, 38, 39, 48, 49}

// looksFixed says whether every data line has the fixed layout (and no tab), the condition for
// reading a file that free format refuses by column.
func looksFixed(lines [][]byte) bool {
	for _, l := range lines {
		if isBlank(l) || l[0] == '*' || l[0] != ' ' && l[0] != '\t' {
			continue
		}
		if bytes.IndexByte(l, '\t') >= 0 {
			return false
		}
		for _, c := range fixedGaps {
			if c <= len(l) && l[c-1] != ' ' {
				return false
			}
		}
	}
	return true
}

func isBlank(l []byte) bool { return len(bytes.TrimSpace(l)) == 0 }

// parse reads lines in free or fixed format.
func parse(lines [][]byte, source string, fixed bool) (*model.Model, error) {
	p := newParser(source, fixed)
	section := ""
	seen := map[string]int{}
	for i, raw := range lines {
		p.line = i + 1
		if isBlank(raw) || raw[0] == '*' {
			continue
		}
		text := string(raw)
		f := strings.Fields(text)
		head := strings.ToUpper(f[0])
		if section == "OBJSENSE" && len(f) == 1 && p.sense(head) == nil {
			continue // MAX or MIN, indented or not (HiGHS reads both)
		}
		// A header starts in column 1; a line holding only a section keyword is one too
		// (HiGHS reads indented headers; no data line has a single field).
		if raw[0] != ' ' && raw[0] != '\t' || len(f) == 1 && (known[head] || unsupported[head] != "") {
			if what := unsupported[head]; what != "" {
				return nil, p.fail("section %s (%s) is outside memsched's model, which is linear with continuous, integer and binary columns", head, what)
			}
			if !known[head] {
				return nil, p.fail("unknown section %q", f[0])
			}
			if head == "OBJSENCE" {
				head = "OBJSENSE"
			}
			if first, dup := seen[head]; dup {
				return nil, p.fail("section %s again (line %d opened it)", head, first)
			}
			seen[head] = p.line
			section = head
			switch head {
			case "NAME":
				p.name = strings.TrimSpace(strings.TrimSpace(text)[len(f[0]):])
			case "OBJSENSE":
				if len(f) > 2 {
					return nil, p.fail("an OBJSENSE line is: OBJSENSE [MAX|MIN]")
				}
				if len(f) == 2 {
					if err := p.sense(f[1]); err != nil {
						return nil, err
					}
				}
			case "ENDATA":
				if len(f) > 1 {
					return nil, p.fail("text after ENDATA on its line")
				}
				return p.build()
			default:
				if len(f) > 1 {
					return nil, p.fail("text after section header %s", head)
				}
			}
			continue
		}
		var err error
		switch section {
		case "OBJSENSE":
			if len(f) != 1 {
				err = p.fail("an OBJSENSE data line is MAX or MIN")
			} else {
				err = p.sense(f[0])
			}
		case "ROWS":
			err = p.rowLine(raw, f)
		case "COLUMNS":
			err = p.columnLine(raw, f)
		case "RHS":
			err = p.rhsLine(raw, f, false)
		case "RANGES":
			err = p.rhsLine(raw, f, true)
		case "BOUNDS":
			err = p.boundLine(raw, f)
		default:
			err = p.fail("data line outside a section")
		}
		if err != nil {
			return nil, err
		}
	}
	p.line = len(lines) + 1
	return nil, p.fail("missing ENDATA")
}
