package lpfile

import "strings"

// sections, by their keywords.
const (
	secNone = iota
	secMin
	secMax
	secRows
	secBounds
	secGeneral
	secBinary
	secSemi
	secSOS
	secEnd
	secUnsupported // a section of a construct outside memsched's model
)

var sectionNames = [...]string{
	secMin: "Minimize", secMax: "Maximize", secRows: "Subject To", secBounds: "Bounds",
	secGeneral: "Generals", secBinary: "Binaries", secSemi: "Semi-continuous", secSOS: "SOS",
	secEnd: "End",
}

// keywords of one token (lower case); "subject to", "such that", "semi-continuous" and the
// unsupported two-word sections are recognized by section.
var keywords = map[string]int{
	"minimize": secMin, "minimise": secMin, "minimum": secMin, "min": secMin,
	"maximize": secMax, "maximise": secMax, "maximum": secMax, "max": secMax,
	"st": secRows, "s.t.": secRows, "st.": secRows,
	"bounds": secBounds, "bound": secBounds,
	"general": secGeneral, "generals": secGeneral, "gen": secGeneral, "integer": secGeneral, "integers": secGeneral,
	"binary": secBinary, "binaries": secBinary, "bin": secBinary,
	"semi": secSemi, "semis": secSemi,
	"sos": secSOS,
	"end": secEnd,
}

// twoWords are sections named by two words: the first word, lower case, to the second and the
// section (secUnsupported with what it holds for the error).
var twoWords = map[string]struct {
	second string
	sec    int
	what   string
}{
	"subject": {"to", secRows, ""},
	"such":    {"that", secRows, ""},
	"lazy":    {"constraints", secUnsupported, "lazy constraints"},
	"user":    {"cuts", secUnsupported, "user cuts"},
}

// section recognizes a section keyword at token i: the section, how many tokens the keyword
// spans, and for an unsupported section what it holds. A keyword is recognized wherever a
// token may start (HiGHS and CBC read "Minimize x subject to x >= 1" on one line), except
//
//   - before a colon, where it is a row's label (a row may be named end);
//   - bin and gen, short forms that CBC does not know, which open a section only alone on
//     their line and when no variable of that name exists: elsewhere they are names.
func (p *lpParser) section(i int) (sec, n int, what string) {
	if i >= len(p.toks) || p.toks[i].kind != tName {
		return secNone, 0, ""
	}
	t := p.toks[i]
	if i+1 < len(p.toks) && p.toks[i+1].kind == tColon {
		return secNone, 0, ""
	}
	w := strings.ToLower(t.text)
	next := func(k int) *token {
		if i+k < len(p.toks) {
			return &p.toks[i+k]
		}
		return nil
	}
	if tw, ok := twoWords[w]; ok {
		if nt := next(1); nt != nil && nt.kind == tName && strings.ToLower(nt.text) == tw.second {
			return tw.sec, 2, tw.what
		}
		return secNone, 0, ""
	}
	if w == "general" || w == "generals" {
		if nt := next(1); nt != nil && nt.kind == tName && nt.line == t.line &&
			(strings.EqualFold(nt.text, "constraints") || strings.EqualFold(nt.text, "constraint")) {
			return secUnsupported, 2, "general constraints"
		}
	}
	if w == "semi" {
		// semi-continuous: the tokenizer split it at the '-'.
		if s, c := next(1), next(2); s != nil && c != nil && s.kind == tSign && s.text == "-" &&
			c.kind == tName && strings.EqualFold(c.text, "continuous") && c.line == t.line {
			return secSemi, 3, ""
		}
	}
	sec, ok := keywords[w]
	if !ok {
		return secNone, 0, ""
	}
	if w == "bin" || w == "gen" {
		if _, isVar := p.vars[t.text]; isVar || !t.alone {
			return secNone, 0, ""
		}
	}
	return sec, 1, ""
}

func (p *lpParser) atSection() bool {
	s, _, _ := p.section(p.pos)
	return s != secNone
}
