package lpfile

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

type tokKind uint8

const (
	tName tokKind = iota
	tNum
	tOp    // <=, >=, =
	tSign  // + or -
	tColon // :
)

type token struct {
	kind  tokKind
	text  string
	num   float64
	line  int
	first bool // first token of its line
}

// sections, by their keyword (lower case) at the start of a line.
const (
	secNone = iota
	secObj
	secRows
	secBounds
	secGeneral
	secBinary
	secEnd
)

// Read parses a CPLEX LP file: the sections Minimize/Maximize (also min, max, minimum,
// maximum), Subject To (also st, s.t., such that), Bounds, Generals/Integers, Binaries and End,
// section keywords at the start of a line, "\" comments, terms "[+|-] [number] name" spread over
// lines, rows "[name:] expr op rhs" and "[name:] lo <= expr <= hi", bounds "x free",
// "lo <= x <= hi", "x >= lo", "x <= hi", "x = v", "-inf"/"+inf"/"infinity". Variables are numbered
// in order of first appearance; their default bounds are [0, +inf). Every error is a
// *ParseError with its line.
func Read(rd io.Reader, source string) (*model.Model, error) {
	p := &lpParser{src: source, vars: map[string]model.Var{}, m: model.New(source)}
	if err := p.tokenize(rd); err != nil {
		return nil, err
	}
	if err := p.parse(); err != nil {
		return nil, err
	}
	if err := p.m.Validate(); err != nil {
		return nil, fmt.Errorf("lpfile: %s: %w", source, err)
	}
	return p.m, nil
}

type lpParser struct {
	src   string
	toks  []token
	pos   int
	vars  map[string]model.Var
	lb    []float64
	ub    []float64
	types []model.VarType
	m     *model.Model
	// rows are added after all variables are known, so that bounds and types come first.
	rows   []pendingRow
	obj    model.Expr
	max    bool
	lastLn int
}

type pendingRow struct {
	name   string
	lo, hi float64
	e      model.Expr
}

func (p *lpParser) fail(line int, format string, args ...any) error {
	return &ParseError{Format: "lpfile", Source: p.src, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *lpParser) tokenize(rd io.Reader) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	ln := 0
	for sc.Scan() {
		ln++
		s := sc.Text()
		if i := strings.IndexByte(s, '\\'); i >= 0 {
			s = s[:i]
		}
		first := true
		for i := 0; i < len(s); {
			c := s[i]
			switch {
			case c == ' ' || c == '\t' || c == '\r':
				i++
				continue
			case c == '<' || c == '>' || c == '=':
				j := i + 1
				for j < len(s) && (s[j] == '=' || s[j] == '<' || s[j] == '>') {
					j++
				}
				op, ok := map[string]string{"<=": "<=", "=<": "<=", "<": "<=", ">=": ">=", "=>": ">=", ">": ">=", "=": "="}[s[i:j]]
				if !ok {
					return p.fail(ln, "bad operator %q", s[i:j])
				}
				p.toks = append(p.toks, token{kind: tOp, text: op, line: ln, first: first})
				i = j
			case c == '+' || c == '-':
				p.toks = append(p.toks, token{kind: tSign, text: string(c), line: ln, first: first})
				i++
			case c == ':':
				p.toks = append(p.toks, token{kind: tColon, line: ln, first: first})
				i++
			case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
				j := i
				for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
					j++
				}
				if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
					k := j + 1
					if k < len(s) && (s[k] == '+' || s[k] == '-') {
						k++
					}
					if k < len(s) && s[k] >= '0' && s[k] <= '9' {
						for k < len(s) && s[k] >= '0' && s[k] <= '9' {
							k++
						}
						j = k
					}
				}
				x, err := strconv.ParseFloat(s[i:j], 64)
				if err != nil {
					return p.fail(ln, "bad number %q", s[i:j])
				}
				p.toks = append(p.toks, token{kind: tNum, text: s[i:j], num: x, line: ln, first: first})
				i = j
			default:
				j := i
				for j < len(s) && !strings.ContainsRune(" \t\r<>=+-:", rune(s[j])) {
					j++
				}
				w := s[i:j]
				lw := strings.ToLower(w)
				if lw == "inf" || lw == "infinity" {
					p.toks = append(p.toks, token{kind: tNum, text: w, num: math.Inf(1), line: ln, first: first})
				} else {
					p.toks = append(p.toks, token{kind: tName, text: w, line: ln, first: first})
				}
				i = j
			}
			first = false
		}
	}
	p.lastLn = ln
	return sc.Err()
}

// section recognizes a section keyword at token i (and returns how many tokens it spans).
func (p *lpParser) section(i int) (int, int) {
	if i >= len(p.toks) || !p.toks[i].first || p.toks[i].kind != tName {
		return secNone, 0
	}
	w := strings.ToLower(p.toks[i].text)
	next := ""
	if i+1 < len(p.toks) && p.toks[i+1].kind == tName && p.toks[i+1].line == p.toks[i].line {
		next = strings.ToLower(p.toks[i+1].text)
	}
	switch {
	case w == "minimize" || w == "minimum" || w == "min" || w == "minimise":
		return secObj, 1
	case w == "maximize" || w == "maximum" || w == "max" || w == "maximise":
		p.max = true
		return secObj, 1
	case w == "subject" && next == "to", w == "such" && next == "that":
		return secRows, 2
	case w == "st" || w == "s.t." || w == "st.":
		return secRows, 1
	case w == "bounds" || w == "bound":
		return secBounds, 1
	case w == "general" || w == "generals" || w == "gen" || w == "integer" || w == "integers":
		return secGeneral, 1
	case w == "binary" || w == "binaries" || w == "bin":
		return secBinary, 1
	case w == "end":
		return secEnd, 1
	}
	return secNone, 0
}

func (p *lpParser) atSection() bool {
	s, _ := p.section(p.pos)
	return s != secNone
}

func (p *lpParser) line() int {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].line
	}
	return p.lastLn
}

func (p *lpParser) variable(name string) model.Var {
	if v, ok := p.vars[name]; ok {
		return v
	}
	v := model.Var(len(p.lb))
	p.vars[name] = v
	p.lb = append(p.lb, 0)
	p.ub = append(p.ub, math.Inf(1))
	p.types = append(p.types, model.Continuous)
	return v
}

func (p *lpParser) parse() error {
	sec, n := p.section(0)
	if sec != secObj {
		return p.fail(p.line(), "the file must start with Minimize or Maximize")
	}
	p.pos = n
	// The objective: an optional label, then an expression.
	p.label() // the objective's name is not kept
	obj, err := p.expr(false)
	if err != nil {
		return err
	}
	p.obj = obj
	ended := false
	for p.pos < len(p.toks) && !ended {
		sec, n := p.section(p.pos)
		if sec == secNone {
			return p.fail(p.line(), "expected a section keyword, found %q", p.toks[p.pos].text)
		}
		p.pos += n
		switch sec {
		case secObj:
			return p.fail(p.line(), "a second objective section")
		case secRows:
			err = p.rowsSection()
		case secBounds:
			err = p.boundsSection()
		case secGeneral, secBinary:
			err = p.typeSection(sec)
		case secEnd:
			ended = true
		}
		if err != nil {
			return err
		}
	}
	if !ended {
		return p.fail(p.lastLn, "missing End")
	}
	if p.pos < len(p.toks) {
		return p.fail(p.line(), "text after End")
	}
	names := make([]string, len(p.lb))
	for name, v := range p.vars {
		names[v] = name
	}
	for j := range p.lb {
		p.m.AddVar(names[j], p.types[j], p.lb[j], p.ub[j])
	}
	for _, r := range p.rows {
		p.m.AddRow(r.name, r.lo, r.e, r.hi)
	}
	sense := model.Minimize
	if p.max {
		sense = model.Maximize
	}
	p.m.SetObjective(sense, p.obj)
	return nil
}

// label consumes "name :" if present and returns the name.
func (p *lpParser) label() string {
	if p.pos+1 < len(p.toks) && p.toks[p.pos].kind == tName && p.toks[p.pos+1].kind == tColon && !p.atSection() {
		name := p.toks[p.pos].text
		p.pos += 2
		return name
	}
	return ""
}

// expr reads "[+|-] [number] [name]" terms until an operator, a section or (for rows) the end.
// Bare numbers become the constant.
func (p *lpParser) expr(stopAtLabel bool) (model.Expr, error) {
	var e model.Expr
	terms := 0
	for p.pos < len(p.toks) && !p.atSection() {
		t := p.toks[p.pos]
		if t.kind == tOp {
			break
		}
		if stopAtLabel && terms > 0 && t.kind == tName && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tColon {
			break
		}
		if terms > 0 && t.kind != tSign {
			return e, p.fail(t.line, "expected + or - before %q", t.text)
		}
		sign := p.signs()
		if p.pos >= len(p.toks) || p.atSection() {
			return e, p.fail(p.line(), "a sign without a term")
		}
		coef, hasCoef := 1.0, false
		if p.toks[p.pos].kind == tNum {
			coef, hasCoef = p.toks[p.pos].num, true
			p.pos++
		}
		if p.pos < len(p.toks) && p.toks[p.pos].kind == tName && !p.atSection() &&
			!(p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tColon) {
			if math.IsInf(coef, 0) {
				return e, p.fail(p.toks[p.pos].line, "infinite coefficient on %q", p.toks[p.pos].text)
			}
			e.Add(p.variable(p.toks[p.pos].text), sign*coef)
			p.pos++
		} else if hasCoef {
			if math.IsInf(coef, 0) {
				return e, p.fail(p.line(), "infinite constant")
			}
			e.Constant += sign * coef
		} else {
			return e, p.fail(p.line(), "expected a number or a variable name")
		}
		terms++
	}
	return e, nil
}

// signs consumes a run of + and - and returns the sign they make.
func (p *lpParser) signs() float64 {
	sign := 1.0
	for p.pos < len(p.toks) && p.toks[p.pos].kind == tSign {
		if p.toks[p.pos].text == "-" {
			sign = -sign
		}
		p.pos++
	}
	return sign
}

// rhs reads "[+|-] number" (possibly ±inf).
func (p *lpParser) rhs() (float64, error) {
	sign := p.signs()
	if p.pos >= len(p.toks) || p.toks[p.pos].kind != tNum {
		return 0, p.fail(p.line(), "expected a number")
	}
	x := sign * p.toks[p.pos].num
	p.pos++
	return x, nil
}

func (p *lpParser) rowsSection() error {
	for p.pos < len(p.toks) && !p.atSection() {
		ln := p.line()
		name := p.label()
		// "lo <= expr <= hi": a leading number followed by an operator.
		lo, hi := math.Inf(-1), math.Inf(1)
		leading := false
		if save := p.pos; p.pos < len(p.toks) && (p.toks[p.pos].kind == tNum || p.toks[p.pos].kind == tSign) {
			if x, err := p.rhs(); err == nil && p.pos < len(p.toks) && p.toks[p.pos].kind == tOp {
				op := p.toks[p.pos].text
				p.pos++
				switch op {
				case "<=":
					lo = x
				case ">=":
					hi = x
				default:
					return p.fail(ln, "a ranged row needs <= or >= on both sides")
				}
				leading = true
			} else {
				p.pos = save
			}
		}
		e, err := p.expr(true)
		if err != nil {
			return err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != tOp {
			if leading {
				return p.fail(p.line(), "expected a second operator in a ranged row")
			}
			return p.fail(p.line(), "expected <=, >= or = in row %q", name)
		}
		op := p.toks[p.pos].text
		p.pos++
		x, err := p.rhs()
		if err != nil {
			return err
		}
		switch op {
		case "<=":
			hi = x
		case ">=":
			lo = x
		case "=":
			if leading {
				return p.fail(ln, "= in a ranged row")
			}
			lo, hi = x, x
		}
		if math.IsInf(lo, 1) || math.IsInf(hi, -1) {
			return p.fail(ln, "row %q has an impossible side", name)
		}
		p.rows = append(p.rows, pendingRow{name: name, lo: lo, hi: hi, e: e})
	}
	return nil
}

func (p *lpParser) boundsSection() error {
	for p.pos < len(p.toks) && !p.atSection() {
		ln := p.line()
		var lead float64
		var leadOp string
		if t := p.toks[p.pos]; t.kind == tNum || t.kind == tSign {
			x, err := p.rhs()
			if err != nil {
				return err
			}
			if p.pos >= len(p.toks) || p.toks[p.pos].kind != tOp {
				return p.fail(ln, "expected an operator after %g", x)
			}
			lead, leadOp = x, p.toks[p.pos].text
			p.pos++
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != tName {
			return p.fail(ln, "expected a variable name in a bound")
		}
		v := p.variable(p.toks[p.pos].text)
		p.pos++
		switch leadOp {
		case "<=":
			p.lb[v] = lead
		case ">=":
			p.ub[v] = lead
		case "=":
			p.lb[v], p.ub[v] = lead, lead
		}
		if p.pos < len(p.toks) && p.toks[p.pos].kind == tName && strings.EqualFold(p.toks[p.pos].text, "free") && leadOp == "" {
			p.lb[v], p.ub[v] = math.Inf(-1), math.Inf(1)
			p.pos++
			continue
		}
		if p.pos < len(p.toks) && p.toks[p.pos].kind == tOp && !p.toks[p.pos].first {
			op := p.toks[p.pos].text
			p.pos++
			x, err := p.rhs()
			if err != nil {
				return err
			}
			switch op {
			case "<=":
				p.ub[v] = x
			case ">=":
				p.lb[v] = x
			case "=":
				p.lb[v], p.ub[v] = x, x
			}
		} else if leadOp == "" {
			return p.fail(ln, "a bound needs an operator or free")
		}
	}
	return nil
}

func (p *lpParser) typeSection(sec int) error {
	for p.pos < len(p.toks) && !p.atSection() {
		t := p.toks[p.pos]
		if t.kind != tName {
			return p.fail(t.line, "expected a variable name, found %q", t.text)
		}
		v := p.variable(t.text)
		if sec == secBinary {
			p.types[v] = model.Binary
			p.lb[v], p.ub[v] = math.Max(p.lb[v], 0), math.Min(p.ub[v], 1)
		} else {
			p.types[v] = model.Integer
		}
		p.pos++
	}
	return nil
}
