package mpsfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/memsched/memsched/model"
)

type rowDef struct {
	name    string
	kind    byte // 'N' (a free row other than the objective), 'L', 'G', 'E'
	terms   model.Expr
	rhs     float64
	rhsLine int // line of its RHS entry, 0 if none
	rng     float64
	rngLine int // line of its RANGES entry, 0 if none
}

type colDef struct {
	name     string
	line     int  // line that started the column
	marker   bool // declared between MARKER INTORG and INTEND
	isInt    bool // marker, LI or UI
	binary   bool // BV
	anyBound bool // some BOUNDS line names it
	lb, ub   float64
	lbLine   int // line that set the lower bound, 0 if none
	ubLine   int // line that set the upper bound, 0 if none
	cost     float64
	costLine int // line of its objective entry, 0 if none
}

// set kinds, indexes of parser.sets.
const (
	setRHS = iota
	setRanges
	setBounds
)

var setSection = [...]string{"RHS", "RANGES", "BOUNDS"}

type parser struct {
	src        string
	fixed      bool
	line       int
	name       string
	max        bool
	obj        string // the objective row (the first N row), "" until seen
	objRHS     float64
	objRHSLine int
	rows       []rowDef
	rowIdx     map[string]int // the objective maps to -1
	cols       []colDef
	colIdx     map[string]int
	inInt      bool
	// mark[i] is 1 + the index of the last column with an entry in row i, markLine[i] its line:
	// a second entry of a column in a row is refused.
	mark     []int
	markLine []int
	// sets are the first set names of RHS, RANGES and BOUNDS lines, setLines where they
	// appeared.
	sets     [3]string
	setLines [3]int
	// others are the entries of other sets, checked by build.
	others []otherEntry
}

// otherEntry is an entry of a second RHS, RANGES or BOUNDS set. HiGHS merges the sets (keeping
// the first value of a row or bound side) and CBC reads only the first set: the two agree, and
// memsched reads the entry as they do (ignores it), only when the first set gives the same row
// or bound side a value.
type otherEntry struct {
	kind     int
	set      string
	line     int
	row      int // RHS and RANGES: the row (-1: the objective)
	col      int // BOUNDS: the column and the sides the entry sets
	lo, hi   bool
	rowName  string
	boundTyp string
}

func newParser(source string, fixed bool) *parser {
	return &parser{src: source, fixed: fixed, rowIdx: map[string]int{}, colIdx: map[string]int{}}
}

func (p *parser) fail(format string, args ...any) error {
	return &ParseError{Format: "mpsfile", Source: p.src, Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) failAt(line int, format string, args ...any) error {
	return &ParseError{Format: "mpsfile", Source: p.src, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) sense(s string) error {
	switch strings.ToUpper(s) {
	case "MAX", "MAXIMIZE", "MAXIMISE":
		p.max = true
	case "MIN", "MINIMIZE", "MINIMISE":
		p.max = false
	default:
		return p.fail("OBJSENSE %q (want MAX or MIN)", s)
	}
	return nil
}

// num parses a value: a decimal (or hexadecimal) number, ±Inf/Infinity, or a Fortran exponent
// with D (1.0D3), as HiGHS reads it. NaN is refused.
func (p *parser) num(s string) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if i := strings.IndexAny(s, "dD"); i > 0 {
			x, err = strconv.ParseFloat(s[:i]+"e"+s[i+1:], 64)
		}
	}
	if err != nil || math.IsNaN(x) {
		return 0, p.fail("bad number %q", s)
	}
	return x, nil
}

func (p *parser) rowLine(raw []byte, f []string) error {
	var kind, name string
	if p.fixed {
		kind, name = fixedField(raw, 1), fixedField(raw, 2)
		if len(raw) > 12 && strings.TrimSpace(string(raw[12:])) != "" {
			return p.fail("a ROWS line is: type name")
		}
	} else {
		if len(f) != 2 {
			return p.shape(f, "a ROWS line is: type name")
		}
		kind, name = f[0], f[1]
	}
	if name == "" {
		return p.fail("a ROWS line is: type name")
	}
	kind = strings.ToUpper(kind)
	switch kind {
	case "N", "L", "G", "E":
	default:
		return p.fail("row type %q (want N, L, G or E)", kind)
	}
	if _, dup := p.rowIdx[name]; dup {
		return p.fail("duplicate row %q", name)
	}
	if kind == "N" && p.obj == "" {
		p.obj = name
		p.rowIdx[name] = -1
		return nil
	}
	p.rowIdx[name] = len(p.rows)
	p.rows = append(p.rows, rowDef{name: name, kind: kind[0]})
	p.mark = append(p.mark, 0)
	p.markLine = append(p.markLine, 0)
	return nil
}

// shape is the error for a data line whose fields do not fit the section: a trailing comment
// is named as such.
func (p *parser) shape(f []string, format string, args ...any) error {
	return p.commentOr(f, p.fail(format, args...))
}

// commentOr returns err, or the error of a trailing comment when a field after the first starts
// with '$' or (beyond the fields a line can have) '*'.
func (p *parser) commentOr(f []string, err error) error {
	for k, w := range f {
		if k > 0 && (w[0] == '$' || w[0] == '*' && k >= 5) {
			return p.fail("text %q after the fields: only a '*' in column 1 starts a comment (CBC refuses such lines; HiGHS's fixed-format reader skips text past the fields)", w)
		}
	}
	return err
}

func unquote(s string) string { return strings.ToUpper(strings.Trim(s, "'\"")) }

// marker recognizes a MARKER line and returns its keyword ("" when the line is not one).
func (p *parser) marker(raw []byte, f []string) string {
	if p.fixed {
		if unquote(fixedField(raw, 3)) != "MARKER" {
			return ""
		}
		if k := fixedField(raw, 5); k != "" {
			return unquote(k)
		}
		return unquote(fixedField(raw, 4))
	}
	if len(f) != 3 || unquote(f[1]) != "MARKER" {
		return ""
	}
	if f[1] != "'MARKER'" {
		// An unquoted MARKER may be a row of that name: "X MARKER 1" is an entry.
		if _, err := strconv.ParseFloat(f[2], 64); err == nil {
			return ""
		}
	}
	return unquote(f[2])
}

func (p *parser) columnLine(raw []byte, f []string) error {
	switch mk := p.marker(raw, f); mk {
	case "":
	case "INTORG":
		if p.inInt {
			return p.fail("MARKER INTORG inside an INTORG block")
		}
		p.inInt = true
		return nil
	case "INTEND":
		if !p.inInt {
			return p.fail("MARKER INTEND without INTORG")
		}
		p.inInt = false
		return nil
	default:
		return p.fail("unknown MARKER %q (want INTORG or INTEND)", mk)
	}
	var name string
	var pairs []pair
	ok := true
	if p.fixed {
		name = fixedField(raw, 2)
		pairs, ok = p.entries(raw, nil)
	} else {
		name = f[0]
		pairs, ok = p.entries(raw, f[1:])
	}
	if !ok || name == "" || len(pairs) == 0 {
		return p.shape(f, "a COLUMNS line is: column row value [row value]")
	}
	j, seen := p.colIdx[name]
	if !seen {
		j = len(p.cols)
		p.colIdx[name] = j
		p.cols = append(p.cols, colDef{name: name, line: p.line, marker: p.inInt, isInt: p.inInt, ub: math.Inf(1)})
	} else if j != len(p.cols)-1 {
		return p.fail("column %q continues after other columns (line %d started it)", name, p.cols[j].line)
	}
	c := &p.cols[j]
	for _, e := range pairs {
		v, err := p.num(e.value)
		if err != nil {
			return p.commentOr(f, err)
		}
		if math.IsInf(v, 0) {
			return p.fail("infinite coefficient %q", e.value)
		}
		i, ok := p.rowIdx[e.row]
		if !ok {
			return p.commentOr(f, p.fail("unknown row %q", e.row))
		}
		if v == 0 {
			continue // HiGHS and CBC drop zero entries before looking for duplicates
		}
		if i < 0 {
			if c.costLine != 0 {
				return p.fail("column %q has a second entry in the objective row %q (line %d has the first): HiGHS keeps the first, CBC refuses the file", name, e.row, c.costLine)
			}
			c.cost, c.costLine = v, p.line
			continue
		}
		if p.mark[i] == j+1 {
			return p.fail("column %q has a second entry in row %q (line %d has the first): HiGHS keeps the first, CBC refuses the file", name, e.row, p.markLine[i])
		}
		p.mark[i], p.markLine[i] = j+1, p.line
		p.rows[i].terms.Add(model.Var(j), v)
	}
	return nil
}

// other records the set name of a RHS, RANGES or BOUNDS line and says whether the line belongs
// to a set other than the first (a line without a set name belongs to any).
func (p *parser) other(kind int, name string) bool {
	switch {
	case name == "":
	case p.sets[kind] == "":
		p.sets[kind], p.setLines[kind] = name, p.line
	case p.sets[kind] != name:
		return true
	}
	return false
}

// checkOthers refuses an entry of a second set that the first set does not override: HiGHS
// would merge it, CBC would ignore it.
func (p *parser) checkOthers() error {
	for _, o := range p.others {
		var first bool
		switch {
		case o.kind == setBounds:
			c := p.cols[o.col]
			first = (!o.lo || c.lbLine != 0) && (!o.hi || c.ubLine != 0)
		case o.row < 0:
			first = p.objRHSLine != 0
		case p.rows[o.row].kind == 'N':
			first = true // a free row's RHS is ignored in any set
		case o.kind == setRHS:
			first = p.rows[o.row].rhsLine != 0
		default:
			first = p.rows[o.row].rngLine != 0
		}
		if !first {
			what := fmt.Sprintf("row %q", o.rowName)
			if o.kind == setBounds {
				what = fmt.Sprintf("column %q (%s)", p.cols[o.col].name, o.boundTyp)
			}
			return p.failAt(o.line, "a second %s set %q (line %d started %q) gives %s a value the first set does not: HiGHS merges the sets, CBC reads only the first; keep one",
				setSection[o.kind], o.set, p.setLines[o.kind], p.sets[o.kind], what)
		}
	}
	return nil
}

// rhsLine reads a RHS or RANGES line: [set] row value [row value].
func (p *parser) rhsLine(raw []byte, f []string, ranges bool) error {
	kind, what := setRHS, "RHS"
	if ranges {
		kind, what = setRanges, "RANGES"
	}
	var set string
	var pairs []pair
	ok := true
	if p.fixed {
		set = fixedField(raw, 2)
		pairs, ok = p.entries(raw, nil)
	} else {
		if len(f)%2 == 1 {
			set, f = f[0], f[1:]
		}
		pairs, ok = p.entries(raw, f)
	}
	if !ok || len(pairs) == 0 {
		return p.shape(f, "a %s line is: [set] row value [row value]", what)
	}
	other := p.other(kind, set)
	for _, e := range pairs {
		v, err := p.num(e.value)
		if err != nil {
			return p.commentOr(f, err)
		}
		i, ok := p.rowIdx[e.row]
		if !ok {
			return p.commentOr(f, p.fail("unknown row %q", e.row))
		}
		if other {
			p.others = append(p.others, otherEntry{kind: kind, set: set, line: p.line, row: i, rowName: e.row})
			continue
		}
		if i < 0 {
			if ranges {
				return p.fail("RANGES entry on the objective row %q", e.row)
			}
			if p.objRHSLine != 0 {
				return p.fail("a second RHS entry for the objective row %q (line %d has the first)", e.row, p.objRHSLine)
			}
			if math.IsInf(v, 0) {
				return p.fail("infinite RHS %q on the objective row (its RHS is −c₀)", e.value)
			}
			p.objRHS, p.objRHSLine = v, p.line
			continue
		}
		r := &p.rows[i]
		if r.kind == 'N' {
			if ranges {
				return p.fail("RANGES entry on the free row %q", e.row)
			}
			// A free row has no side: its RHS means nothing (CBC ignores it; HiGHS 1.15 adds it
			// to the objective's constant, a bug memsched does not copy).
			continue
		}
		if ranges {
			if r.rngLine != 0 {
				return p.fail("a second RANGES entry for row %q (line %d has the first): HiGHS keeps the first, CBC refuses the file", e.row, r.rngLine)
			}
			r.rng, r.rngLine = v, p.line
			continue
		}
		if r.rhsLine != 0 {
			return p.fail("a second RHS entry for row %q (line %d has the first): HiGHS keeps the first, CBC refuses the file", e.row, r.rhsLine)
		}
		if math.IsInf(v, 0) && (r.kind == 'E' || r.kind == 'L' && v < 0 || r.kind == 'G' && v > 0) {
			return p.fail("infinite RHS %q on %c row %q leaves no feasible value", e.value, r.kind, e.row)
		}
		r.rhs, r.rhsLine = v, p.line
	}
	return nil
}

// boundLine reads a BOUNDS line: type [set] column [value].
func (p *parser) boundLine(raw []byte, f []string) error {
	var kind, set, col, val string
	if p.fixed {
		kind, set, col, val = fixedField(raw, 1), fixedField(raw, 2), fixedField(raw, 3), fixedField(raw, 4)
	} else {
		kind = f[0]
	}
	kind = strings.ToUpper(kind)
	noValue := false
	switch kind {
	case "UP", "LO", "FX", "LI", "UI":
	case "FR", "MI", "PL", "BV":
		noValue = true
	case "SC":
		return p.fail("bound type SC (semi-continuous column) is outside memsched's model, which has continuous, integer and binary columns")
	case "SI":
		return p.fail("bound type SI (semi-integer column) is outside memsched's model, which has continuous, integer and binary columns")
	default:
		return p.fail("bound type %q (want UP, LO, FX, FR, MI, PL, BV, LI or UI)", kind)
	}
	if !p.fixed {
		_, isCol1 := p.colIdx[elem(f, 1)]
		_, isCol2 := p.colIdx[elem(f, 2)]
		switch {
		case !noValue && len(f) == 3 && !isCol1 && isCol2:
			return p.fail("%s bound on column %q without a value", kind, f[2])
		case !noValue && len(f) == 3:
			col, val = f[1], f[2]
		case !noValue && len(f) == 4:
			set, col, val = f[1], f[2], f[3]
		case noValue && len(f) == 2:
			col = f[1]
		case noValue && len(f) == 3 && !isCol2 && isCol1:
			col = f[1] // "FR X 0": a column and an ignored value
		case noValue && (len(f) == 3 || len(f) == 4):
			set, col = f[1], f[2] // a value after the column is ignored, as HiGHS and CBC do
		default:
			return p.shape(f, "a %s bound line has %d fields (want: %s [set] column%s)", kind, len(f), kind,
				map[bool]string{false: " value", true: ""}[noValue])
		}
	}
	if col == "" {
		return p.fail("a BOUNDS line is: type [set] column [value]")
	}
	other := p.other(setBounds, set)
	j, ok := p.colIdx[col]
	if !ok {
		return p.fail("bound on unknown column %q", col)
	}
	c := &p.cols[j]
	var x float64
	if !noValue {
		if val == "" {
			return p.fail("%s bound on column %q without a value", kind, col)
		}
		var err error
		if x, err = p.num(val); err != nil {
			return err
		}
	}
	if other {
		lo := kind != "UP" && kind != "UI" && kind != "PL"
		hi := kind != "LO" && kind != "LI" && kind != "MI"
		p.others = append(p.others, otherEntry{kind: setBounds, set: set, line: p.line, col: j, lo: lo, hi: hi, boundTyp: kind})
		return nil
	}
	c.anyBound = true
	lower := func(v float64) error {
		if c.lbLine != 0 {
			return p.fail("%s bound sets the lower bound of column %q again (line %d set it): HiGHS keeps the first, CBC refuses the file", kind, col, c.lbLine)
		}
		c.lb, c.lbLine = v, p.line
		return nil
	}
	upper := func(v float64) error {
		if c.ubLine != 0 {
			return p.fail("%s bound sets the upper bound of column %q again (line %d set it): HiGHS keeps the first, CBC refuses the file", kind, col, c.ubLine)
		}
		c.ub, c.ubLine = v, p.line
		return nil
	}
	var err error
	switch kind {
	case "UP":
		err = upper(x)
	case "UI":
		err = upper(x)
		c.isInt = true
	case "LO":
		err = lower(x)
	case "LI":
		err = lower(x)
		c.isInt = true
	case "FX":
		if err = lower(x); err == nil {
			err = upper(x)
		}
	case "FR":
		if err = lower(math.Inf(-1)); err == nil {
			err = upper(math.Inf(1))
		}
	case "MI":
		err = lower(math.Inf(-1))
	case "PL":
		err = upper(math.Inf(1))
	case "BV":
		if err = lower(0); err == nil {
			err = upper(1)
		}
		c.binary = true
	}
	if err == nil && (math.IsInf(c.lb, 1) || math.IsInf(c.ub, -1)) {
		err = p.fail("%s bound %q on column %q leaves no finite value", kind, val, col)
	}
	return err
}

func elem(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// build checks the bounds as a whole (a bound may come after the other side's) and makes the
// model.
func (p *parser) build() (*model.Model, error) {
	if len(p.cols) == 0 {
		return nil, p.fail("the model has no columns")
	}
	if err := p.checkOthers(); err != nil {
		return nil, err
	}
	m := model.New(p.name)
	for _, c := range p.cols {
		t := model.Continuous
		lb, ub := c.lb, c.ub
		switch {
		case c.binary:
			t = model.Binary
		case c.marker && !c.anyBound:
			// An integer column that no BOUNDS line names is binary (HiGHS, CBC, MIPLIB).
			t, lb, ub = model.Binary, 0, 1
		case c.isInt:
			t = model.Integer
		}
		if c.ubLine != 0 && ub < 0 && c.lbLine == 0 {
			return nil, p.failAt(c.ubLine, "upper bound %g < 0 on column %q whose lower bound is left at 0: HiGHS reads [0, %g] (infeasible), CBC and CPLEX (−∞, %g]; write the lower bound (LO or MI)", ub, c.name, ub, ub)
		}
		if lb > ub {
			return nil, p.failAt(max(c.lbLine, c.ubLine), "contradictory bounds [%g, %g] on column %q (HiGHS and CBC read an infeasible model; memsched refuses it)", lb, ub, c.name)
		}
		m.AddVar(c.name, t, lb, ub)
	}
	for _, r := range p.rows {
		lo, hi := math.Inf(-1), math.Inf(1)
		switch r.kind {
		case 'E':
			lo, hi = r.rhs, r.rhs
			if r.rngLine != 0 {
				// E rows with a range: [rhs, rhs+R] for R > 0, [rhs+R, rhs] for R < 0.
				if r.rng >= 0 {
					hi = r.rhs + r.rng
				} else {
					lo = r.rhs + r.rng
				}
			}
		case 'L':
			hi = r.rhs
			if r.rngLine != 0 {
				lo = r.rhs - math.Abs(r.rng)
			}
		case 'G':
			lo = r.rhs
			if r.rngLine != 0 {
				hi = r.rhs + math.Abs(r.rng)
			}
		}
		m.AddRow(r.name, lo, r.terms, hi)
	}
	obj := model.Expr{Constant: -p.objRHS}
	for j, c := range p.cols {
		if c.cost != 0 {
			obj.Add(model.Var(j), c.cost)
		}
	}
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
