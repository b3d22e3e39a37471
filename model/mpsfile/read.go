package mpsfile

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/memsched/memsched/model"
)

// ParseError is a malformed file, with its line.
type ParseError = model.ParseError

type rowDef struct {
	kind   byte
	terms  model.Expr
	rhs    float64
	hasRHS bool
	rng    float64
	hasRng bool
}

type colDef struct {
	name   string
	isInt  bool
	lb, ub float64
	lbSet  bool
	ubSet  bool
	binary bool
}

// Read parses a free-format MPS model (fields separated by whitespace; fixed-format files whose
// names contain no spaces read the same way). source names the input in errors. Sections:
// NAME, OBJSENSE (MAX/MIN on the same or the next line), ROWS, COLUMNS (with MARKER
// INTORG/INTEND), RHS, RANGES, BOUNDS (UP, LO, FX, FR, MI, PL, BV, LI, UI), ENDATA. The first N
// row is the objective; its RHS is −c₀. Other N rows become free rows. Every error is a
// *ParseError with the line number.
func Read(rd io.Reader, source string) (*model.Model, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	p := &parser{src: source, rowIdx: map[string]int{}, colIdx: map[string]int{}}
	section := ""
	sawEnd := false
lines:
	for sc.Scan() {
		p.line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimLeft(text, " \t"), "*") {
			continue
		}
		f := strings.Fields(text)
		if text[0] != ' ' && text[0] != '\t' {
			// A section header.
			section = strings.ToUpper(f[0])
			switch section {
			case "NAME":
				if len(f) > 1 {
					p.name = strings.Join(f[1:], " ")
				}
			case "OBJSENSE", "OBJSENCE":
				section = "OBJSENSE"
				if len(f) > 1 {
					if err := p.sense(f[1]); err != nil {
						return nil, err
					}
				}
			case "ROWS", "COLUMNS", "RHS", "RANGES", "BOUNDS":
			case "ENDATA":
				sawEnd = true
			default:
				return nil, p.fail("unknown section %q", f[0])
			}
			if sawEnd {
				break lines
			}
			continue
		}
		var err error
		switch section {
		case "OBJSENSE":
			err = p.sense(f[0])
		case "ROWS":
			err = p.row(f)
		case "COLUMNS":
			err = p.column(f)
		case "RHS":
			err = p.rhs(f, false)
		case "RANGES":
			err = p.rhs(f, true)
		case "BOUNDS":
			err = p.bound(f)
		case "NAME", "":
			err = p.fail("data line outside a section")
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mpsfile: %s: %w", source, err)
	}
	if !sawEnd {
		p.line++
		return nil, p.fail("missing ENDATA")
	}
	if p.obj == "" && len(p.rows) == 0 && len(p.cols) == 0 {
		return nil, p.fail("empty model")
	}
	return p.build()
}

type parser struct {
	src      string
	line     int
	name     string
	max      bool
	obj      string
	objRHS   float64
	rows     []rowDef
	rowNames []string
	rowIdx   map[string]int
	cols     []colDef
	colIdx   map[string]int
	objTerms model.Expr
	inInt    bool
}

func (p *parser) fail(format string, args ...any) error {
	return &ParseError{Format: "mpsfile", Source: p.src, Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) sense(s string) error {
	switch strings.ToUpper(s) {
	case "MAX", "MAXIMIZE":
		p.max = true
	case "MIN", "MINIMIZE":
		p.max = false
	default:
		return p.fail("OBJSENSE %q (want MAX or MIN)", s)
	}
	return nil
}

func (p *parser) num(s string) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) {
		return 0, p.fail("bad number %q", s)
	}
	return x, nil
}

func (p *parser) row(f []string) error {
	if len(f) != 2 {
		return p.fail("a ROWS line is: type name")
	}
	kind := strings.ToUpper(f[0])
	name := f[1]
	if kind == "N" && p.obj == "" {
		p.obj = name
		return nil
	}
	if _, dup := p.rowIdx[name]; dup || name == p.obj {
		return p.fail("duplicate row %q", name)
	}
	switch kind {
	case "N", "L", "G", "E":
	default:
		return p.fail("row type %q (want N, L, G or E)", f[0])
	}
	p.rowIdx[name] = len(p.rows)
	p.rows = append(p.rows, rowDef{kind: kind[0]})
	p.rowNames = append(p.rowNames, name)
	return nil
}

func (p *parser) column(f []string) error {
	if len(f) == 3 && strings.Trim(f[1], "'\"") == "MARKER" {
		switch strings.Trim(f[2], "'\"") {
		case "INTORG":
			p.inInt = true
		case "INTEND":
			p.inInt = false
		default:
			return p.fail("unknown MARKER %q", f[2])
		}
		return nil
	}
	if len(f) != 3 && len(f) != 5 {
		return p.fail("a COLUMNS line is: column row value [row value]")
	}
	j, ok := p.colIdx[f[0]]
	if !ok {
		j = len(p.cols)
		p.colIdx[f[0]] = j
		p.cols = append(p.cols, colDef{name: f[0], isInt: p.inInt, ub: math.Inf(1)})
	} else if j != len(p.cols)-1 {
		return p.fail("column %q continues after other columns", f[0])
	}
	for k := 1; k+1 < len(f); k += 2 {
		v, err := p.num(f[k+1])
		if err != nil {
			return err
		}
		if math.IsInf(v, 0) {
			return p.fail("infinite coefficient %q", f[k+1])
		}
		if f[k] == p.obj {
			p.objTerms.Add(model.Var(j), v)
			continue
		}
		i, ok := p.rowIdx[f[k]]
		if !ok {
			return p.fail("unknown row %q", f[k])
		}
		p.rows[i].terms.Add(model.Var(j), v)
	}
	return nil
}

// rhs reads an RHS or RANGES line: [set] row value [row value].
func (p *parser) rhs(f []string, ranges bool) error {
	if len(f)%2 == 1 {
		f = f[1:] // drop the set name
	}
	if len(f) == 0 {
		return p.fail("missing row and value")
	}
	for k := 0; k+1 < len(f); k += 2 {
		v, err := p.num(f[k+1])
		if err != nil {
			return err
		}
		if f[k] == p.obj && !ranges {
			p.objRHS = v
			continue
		}
		i, ok := p.rowIdx[f[k]]
		if !ok {
			return p.fail("unknown row %q", f[k])
		}
		if ranges {
			if p.rows[i].kind == 'N' {
				return p.fail("range on free row %q", f[k])
			}
			p.rows[i].rng, p.rows[i].hasRng = v, true
		} else {
			p.rows[i].rhs, p.rows[i].hasRHS = v, true
		}
	}
	return nil
}

func (p *parser) bound(f []string) error {
	if len(f) < 2 {
		return p.fail("a BOUNDS line is: type [set] column [value]")
	}
	kind := strings.ToUpper(f[0])
	noValue := kind == "FR" || kind == "MI" || kind == "PL" || kind == "BV"
	var col, val string
	switch {
	case noValue && len(f) == 2:
		col = f[1]
	case noValue && (len(f) == 3 || len(f) == 4):
		col = f[2] // set name, column [, ignored value]
	case !noValue && len(f) == 3:
		col, val = f[1], f[2]
	case !noValue && len(f) == 4:
		col, val = f[2], f[3]
	default:
		return p.fail("a %s bound line has %d fields", kind, len(f))
	}
	j, ok := p.colIdx[col]
	if !ok {
		return p.fail("bound on unknown column %q", col)
	}
	c := &p.cols[j]
	var x float64
	if !noValue {
		var err error
		if x, err = p.num(val); err != nil {
			return err
		}
	}
	switch kind {
	case "UP", "UI":
		c.ub, c.ubSet = x, true
		if x < 0 && !c.lbSet {
			c.lb = math.Inf(-1) // the MPS convention for a negative upper bound alone
		}
		c.isInt = c.isInt || kind == "UI"
	case "LO", "LI":
		c.lb, c.lbSet = x, true
		c.isInt = c.isInt || kind == "LI"
	case "FX":
		c.lb, c.ub, c.lbSet, c.ubSet = x, x, true, true
	case "FR":
		c.lb, c.ub, c.lbSet, c.ubSet = math.Inf(-1), math.Inf(1), true, true
	case "MI":
		c.lb, c.lbSet = math.Inf(-1), true
	case "PL":
		c.ub, c.ubSet = math.Inf(1), true
	case "BV":
		c.lb, c.ub, c.lbSet, c.ubSet, c.binary = 0, 1, true, true, true
	default:
		return p.fail("bound type %q (want UP, LO, FX, FR, MI, PL, BV, LI or UI)", f[0])
	}
	if c.lb > c.ub {
		return p.fail("contradictory bounds [%g, %g] on column %q", c.lb, c.ub, col)
	}
	return nil
}

func (p *parser) build() (*model.Model, error) {
	m := model.New(p.name)
	for _, c := range p.cols {
		t := model.Continuous
		switch {
		case c.binary:
			t = model.Binary
		case c.isInt:
			t = model.Integer
		}
		m.AddVar(c.name, t, c.lb, c.ub)
	}
	for i, r := range p.rows {
		lo, hi := math.Inf(-1), math.Inf(1)
		switch r.kind {
		case 'E':
			lo, hi = r.rhs, r.rhs
			if r.hasRng {
				// E rows with a range: [rhs, rhs+R] for R > 0, [rhs+R, rhs] for R < 0.
				if r.rng >= 0 {
					hi = r.rhs + r.rng
				} else {
					lo = r.rhs + r.rng
				}
			}
		case 'L':
			hi = r.rhs
			if r.hasRng {
				lo = r.rhs - math.Abs(r.rng)
			}
		case 'G':
			lo = r.rhs
			if r.hasRng {
				hi = r.rhs + math.Abs(r.rng)
			}
		}
		m.AddRow(p.rowNames[i], lo, r.terms, hi)
	}
	obj := p.objTerms
	obj.Constant = -p.objRHS
	sense := model.Minimize
	if p.max {
		sense = model.Maximize
	}
	m.SetObjective(sense, obj)
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("mpsfile: %s: %w", p.src, err)
	}
	return m, nil
}
