package lpfile

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"
)

type tokKind uint8

const (
	tName tokKind = iota
	tNum
	tOp        // <=, >=, =
	tSign      // + or -
	tColon     // :
	tQuad      // [ ] * ^ / : a quadratic term (outside memsched's model)
	tIndicator // -> or <->: an indicator constraint (outside memsched's model)
)

type token struct {
	kind  tokKind
	text  string
	num   float64
	line  int
	first bool // first token of its line
	alone bool // only token of its line
}

// nameStop holds the characters that end a name (besides white space): operators, signs and
// the colon. Anything else, brackets and slashes included, may be inside a name (CBC reads
// x[1] as one name), but not start one.
const nameStop = " \t\r<>=+-:"

func (p *lpParser) tokenize(rd io.Reader) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	ln := 0
	for sc.Scan() {
		ln++
		s := sc.Text()
		if i := strings.IndexByte(s, '\\'); i >= 0 {
			// "\ Problem name: NAME" before the objective (CPLEX, HiGHS and memsched write it)
			// names the model.
			if c := strings.TrimSpace(s[i+1:]); len(p.toks) == 0 && strings.HasPrefix(strings.ToLower(c), "problem name:") {
				if name := strings.TrimSpace(c[len("problem name:"):]); name != "" {
					p.m.Name = name
				}
			}
			s = s[:i]
		}
		start := len(p.toks)
		for i := 0; i < len(s); {
			c := s[i]
			t := token{line: ln, first: len(p.toks) == start}
			switch {
			case c == ' ' || c == '\t' || c == '\r':
				i++
				continue
			case c == '-' && i+1 < len(s) && s[i+1] == '>', c == '<' && strings.HasPrefix(s[i:], "<->"):
				n := 2
				if c == '<' {
					n = 3
				}
				t.kind, t.text = tIndicator, s[i:i+n]
				i += n
			case c == '<' || c == '>' || c == '=':
				j := i + 1
				for j < len(s) && (s[j] == '=' || s[j] == '<' || s[j] == '>') {
					j++
				}
				op, ok := map[string]string{"<=": "<=", "=<": "<=", "<": "<=", ">=": ">=", "=>": ">=", ">": ">=", "=": "="}[s[i:j]]
				if !ok {
					return p.fail(ln, "bad operator %q", s[i:j])
				}
				t.kind, t.text = tOp, op
				i = j
			case c == '+' || c == '-':
				t.kind, t.text = tSign, string(c)
				i++
			case c == ':':
				t.kind, t.text = tColon, ":"
				i++
			case c == '[' || c == ']' || c == '*' || c == '^' || c == '/':
				if c == '/' && i+1 < len(s) && s[i+1] == '*' {
					return p.fail(ln, "a /* */ comment: the LP format's comments start with \\ (HiGHS reads /* */, CBC does not)")
				}
				t.kind, t.text = tQuad, string(c)
				i++
			case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
				j := scanNumber(s, i)
				x, err := strconv.ParseFloat(s[i:j], 64)
				if err != nil {
					return p.fail(ln, "bad number %q", s[i:j])
				}
				if j < len(s) && !strings.ContainsRune(nameStop+"[]*^/", rune(s[j])) {
					k := j
					for k < len(s) && !strings.ContainsRune(nameStop, rune(s[k])) {
						k++
					}
					return p.fail(ln, "%q: a number runs into a name (HiGHS reads %s·%s, CBC a variable named %s); separate them or rename",
						s[i:k], s[i:j], s[j:k], s[i:k])
				}
				t.kind, t.text, t.num = tNum, s[i:j], x
				i = j
			default:
				j := i
				for j < len(s) && !strings.ContainsRune(nameStop, rune(s[j])) {
					j++
				}
				w := s[i:j]
				t.kind, t.text = tName, w
				if lw := strings.ToLower(w); lw == "inf" || lw == "infinity" {
					t.kind, t.num = tNum, math.Inf(1)
				}
				i = j
			}
			p.toks = append(p.toks, t)
		}
		if len(p.toks) == start+1 {
			p.toks[start].alone = true
		}
	}
	p.lastLn = ln
	return sc.Err()
}

// scanNumber returns the end of the decimal number that starts at s[i]: digits and dots, then
// an exponent only when digits follow the e (so that "2e" is 2 followed by a name).
func scanNumber(s string, i int) int {
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
	return j
}
