package lpfile

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/memsched/memsched/model"
)

// ParseError is a malformed file, or one with a construct outside memsched's model, with its
// line.
type ParseError = model.ParseError

// Read parses a CPLEX LP file; source names the input in errors. Every error is a *ParseError
// with its line.
//
// Sections: Minimize/Maximize (also min, max, minimum, maximum, minimise, maximise), Subject To
// (also st, s.t., st., such that), Bounds, Generals (also general, gen, integer(s)), Binaries
// (also binary, bin) and End, in any order after the objective; "\" comments; terms
// "[+|-] [number] name" spread over lines; rows "[name:] expr op rhs" and
// "[name:] lo <= expr <= hi"; bounds "x free", "lo <= x <= hi", "x >= lo", "x <= hi", "x = v",
// with -inf/+inf/infinity; a "\ Problem name: NAME" comment before the objective names the
// model (else it is named source). Variables are numbered in order of first appearance; their
// default bounds are [0, +inf). The conventions — those of HiGHS and CBC where they agree, a ParseError
// where they do not — are documented in docs/modeling.md; in short:
//
//   - section keywords are recognized anywhere a token starts, except before a colon (a row may
//     be labelled end:); bin and gen, which CBC does not know, only alone on their line and
//     when no variable has that name;
//   - a term repeated in a row or the objective is summed (HiGHS; CBC refuses the file);
//   - a bound stated twice: the last one holds (both);
//   - refused: a negative upper bound on a variable whose lower bound is left at 0 (both read
//     [0, u], an infeasible model memsched cannot hold), a Binaries variable with bounds
//     beyond [0, 1] (HiGHS keeps them, CBC clamps them), a number that runs into a name (3x:
//     HiGHS reads 3·x, CBC a variable named 3x), and constructs outside memsched's model:
//     quadratic terms, indicator constraints, semi-continuous and SOS sections, lazy
//     constraints, user cuts, general constraints.
//
// Names starting with inf or nan (inflow) are names, as CBC and CPLEX read them; HiGHS 1.15
// reads them as numbers, so the writer escapes them.
func Read(rd io.Reader, source string) (*model.Model, error) {
	p := &lpParser{src: source, vars: map[string]model.Var{}, rowNames: map[string]int{}, m: model.New(source)}
	if err := p.tokenize(rd); err != nil {
		if p.lpSolveFormat() {
			return nil, p.fail(1, "the file must start with Minimize or Maximize (max: ... ; is lp_solve's LP format, not CPLEX LP)")
		}
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

// varDef is what the file says about one variable.
type varDef struct {
	name           string
	lb, ub         float64
	lbLine, ubLine int // lines of the explicit bounds, 0 if none
	general        bool
	binary         int // line of its Binaries entry, 0 if none
}

type lpParser struct {
	src      string
	toks     []token
	pos      int
	vars     map[string]model.Var
	defs     []varDef
	rowNames map[string]int // name → line
	m        *model.Model
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
	v := model.Var(len(p.defs))
	p.vars[name] = v
	p.defs = append(p.defs, varDef{name: name, ub: math.Inf(1)})
	return v
}

// unsupportedToken is the error for a token of a construct outside memsched's model.
func (p *lpParser) unsupportedToken(t token) error {
	if t.kind == tIndicator {
		return p.fail(t.line, "%q: indicator constraints are outside memsched's model, which is linear", t.text)
	}
	return p.fail(t.line, "%q: quadratic terms ([ ... ], *, ^, /) are outside memsched's model, which is linear", t.text)
}

func (p *lpParser) parse() error {
	sec, n, _ := p.section(0)
	if sec != secMin && sec != secMax {
		if p.lpSolveFormat() {
			return p.fail(p.line(), "the file must start with Minimize or Maximize (max: ... ; is lp_solve's LP format, not CPLEX LP)")
		}
		return p.fail(p.line(), "the file must start with Minimize or Maximize")
	}
	p.max = sec == secMax
	p.pos = n
	// The objective: an optional label, then an expression.
	p.label() // the objective's name is not kept
	obj, err := p.expr()
	if err != nil {
		return err
	}
	p.obj = obj
	seen := map[int]int{sec: p.toks[0].line}
	ended := false
	for p.pos < len(p.toks) && !ended {
		ln := p.line()
		sec, n, what := p.section(p.pos)
		switch sec {
		case secNone:
			t := p.toks[p.pos]
			if t.kind == tQuad || t.kind == tIndicator {
				return p.unsupportedToken(t)
			}
			return p.fail(ln, "expected a section keyword, found %q", t.text)
		case secUnsupported:
			return p.fail(ln, "section %q is outside memsched's model, which is linear with continuous, integer and binary variables", what)
		case secMin, secMax:
			return p.fail(ln, "a second objective section (line %d opened the first)", seen[secMin]+seen[secMax])
		case secRows, secBounds:
			if first, dup := seen[sec]; dup {
				return p.fail(ln, "section %s again (line %d opened it)", sectionNames[sec], first)
			}
		}
		seen[sec] = ln
		p.pos += n
		switch sec {
		case secRows:
			err = p.rowsSection()
		case secBounds:
			err = p.boundsSection()
		case secGeneral, secBinary:
			err = p.typeSection(sec)
		case secSemi, secSOS:
			err = p.refusedSection(sec)
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
	return p.build()
}

// lpSolveFormat says whether the file starts as lp_solve's LP format does ("max:" or "min:").
func (p *lpParser) lpSolveFormat() bool {
	if len(p.toks) < 2 || p.toks[1].kind != tColon {
		return false
	}
	w := strings.ToLower(p.toks[0].text)
	return w == "max" || w == "min" || w == "maximize" || w == "minimize" || w == "maximise" || w == "minimise"
}

// build checks the bounds and types as a whole (a bound or a type may come in any section
// order) and makes the model.
func (p *lpParser) build() error {
	for _, d := range p.defs {
		t := model.Continuous
		lb, ub := d.lb, d.ub
		if d.ubLine != 0 && ub < 0 && d.lbLine == 0 {
			return p.fail(d.ubLine, "upper bound %g < 0 on %q whose lower bound is left at 0: HiGHS and CBC read [0, %g], an infeasible model memsched refuses (MPS readers disagree: CBC takes (−∞, %g]); write the lower bound, e.g. -inf <= %s <= %g",
				ub, d.name, ub, ub, d.name, ub)
		}
		if lb > ub {
			return p.fail(max(d.lbLine, d.ubLine), "contradictory bounds [%g, %g] on %q (HiGHS and CBC read an infeasible model; memsched refuses it)", lb, ub, d.name)
		}
		switch {
		case d.binary != 0:
			if lb < 0 || ub > 1 && d.ubLine != 0 {
				return p.fail(d.binary, "binary %q has bounds [%g, %g] beyond [0, 1] (HiGHS keeps them, CBC clamps them to [0, 1]); bound it within [0, 1] or declare it general", d.name, lb, ub)
			}
			t = model.Binary
			if math.IsInf(ub, 1) {
				ub = 1
			}
		case d.general:
			t = model.Integer
		}
		p.m.AddVar(d.name, t, lb, ub)
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

// label consumes "name :" if present and returns the name (a keyword before a colon is a name).
func (p *lpParser) label() string {
	if p.pos+1 < len(p.toks) && p.toks[p.pos].kind == tName && p.toks[p.pos+1].kind == tColon {
		name := p.toks[p.pos].text
		p.pos += 2
		return name
	}
	return ""
}

// expr reads "[+|-] [number] [name]" terms until an operator, a section, a label or the end.
// Bare numbers become the constant.
func (p *lpParser) expr() (model.Expr, error) {
	var e model.Expr
	terms := 0
	for p.pos < len(p.toks) && !p.atSection() {
		t := p.toks[p.pos]
		switch t.kind {
		case tOp:
			return e, nil
		case tQuad, tIndicator:
			return e, p.unsupportedToken(t)
		}
		if terms > 0 && t.kind == tName && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tColon {
			break // the next row's label
		}
		if terms > 0 && t.kind != tSign {
			return e, p.fail(t.line, "expected + or - before %q", t.text)
		}
		sign := p.signs()
		if p.pos >= len(p.toks) {
			return e, p.fail(p.line(), "a sign without a term")
		}
		coef, hasCoef := 1.0, false
		if p.toks[p.pos].kind == tNum {
			coef, hasCoef = p.toks[p.pos].num, true
			p.pos++
		}
		switch {
		case p.pos < len(p.toks) && p.toks[p.pos].kind == tName && !p.atSection() &&
			!(p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tColon):
			if math.IsInf(coef, 0) {
				return e, p.fail(p.toks[p.pos].line, "infinite coefficient on %q", p.toks[p.pos].text)
			}
			e.Add(p.variable(p.toks[p.pos].text), sign*coef)
			p.pos++
		case hasCoef:
			if math.IsInf(coef, 0) {
				return e, p.fail(p.line(), "infinite constant")
			}
			e.Constant += sign * coef
		case p.pos < len(p.toks) && (p.toks[p.pos].kind == tQuad || p.toks[p.pos].kind == tIndicator):
			return e, p.unsupportedToken(p.toks[p.pos])
		case p.pos >= len(p.toks) || p.atSection():
			return e, p.fail(p.line(), "a sign without a term")
		default:
			return e, p.fail(p.line(), "expected a number or a variable name, found %q", p.toks[p.pos].text)
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
		if p.pos < len(p.toks) && (p.toks[p.pos].kind == tQuad || p.toks[p.pos].kind == tIndicator) {
			return 0, p.unsupportedToken(p.toks[p.pos])
		}
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
		if name != "" {
			if first, dup := p.rowNames[name]; dup {
				return p.fail(ln, "duplicate row %q (line %d has the first)", name, first)
			}
			p.rowNames[name] = ln
		}
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
		e, err := p.expr()
		if err != nil {
			return err
		}
		if e.Constant != 0 {
			// x - 1 >= 2: HiGHS 1.15 drops the constant (x >= 2, its own test asserts it), CBC
			// refuses the row, the algebra says x >= 3. Three meanings: refuse.
			what := "the row"
			if name != "" {
				what = fmt.Sprintf("row %q", name)
			}
			return p.fail(ln, "constant %g among the terms of %s: HiGHS drops it, CBC refuses the row; write it on the right side", e.Constant, what)
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
		if math.IsInf(lo, 1) || math.IsInf(hi, -1) || lo > hi {
			return p.fail(ln, "row %q has sides [%g, %g] that leave no feasible value", name, lo, hi)
		}
		if p.pos < len(p.toks) && p.toks[p.pos].kind == tIndicator {
			return p.unsupportedToken(p.toks[p.pos])
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
		d := &p.defs[v]
		p.pos++
		setLB := func(x float64) { d.lb, d.lbLine = x, ln }
		setUB := func(x float64) { d.ub, d.ubLine = x, ln }
		switch leadOp {
		case "<=":
			setLB(lead)
		case ">=":
			setUB(lead)
		case "=":
			setLB(lead)
			setUB(lead)
		}
		if p.pos < len(p.toks) && p.toks[p.pos].kind == tName && strings.EqualFold(p.toks[p.pos].text, "free") && leadOp == "" {
			setLB(math.Inf(-1))
			setUB(math.Inf(1))
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
				setUB(x)
			case ">=":
				setLB(x)
			case "=":
				setLB(x)
				setUB(x)
			}
		} else if leadOp == "" {
			return p.fail(ln, "a bound needs an operator or free")
		}
		if math.IsInf(d.lb, 1) || math.IsInf(d.ub, -1) {
			return p.fail(ln, "bound [%g, %g] on %q leaves no finite value", d.lb, d.ub, d.name)
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
		d := &p.defs[p.variable(t.text)]
		if sec == secBinary {
			d.binary = t.line
		} else {
			d.general = true
		}
		p.pos++
	}
	return nil
}

// refusedSection reads a Semi-continuous or SOS section: empty (a writer may emit the header
// alone), it means nothing; an entry is a construct outside memsched's model.
func (p *lpParser) refusedSection(sec int) error {
	if p.pos < len(p.toks) && !p.atSection() {
		what := "semi-continuous variables"
		if sec == secSOS {
			what = "special ordered sets"
		}
		return p.fail(p.line(), "section %s (%s) is outside memsched's model, which has continuous, integer and binary variables", sectionNames[sec], what)
	}
	return nil
}
