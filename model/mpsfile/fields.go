package mpsfile

import "strings"

// fixedField returns field k (1..6) of a fixed-format line — columns 2-3, 5-12, 15-22, 25-36,
// 40-47, 50-61 — without its surrounding blanks (a name keeps its inner spaces).
func fixedField(raw []byte, k int) string {
	span := [...][2]int{{2, 3}, {5, 12}, {15, 22}, {25, 36}, {40, 47}, {50, 61}}[k-1]
	a, b := span[0]-1, span[1]
	if a >= len(raw) {
		return ""
	}
	if b > len(raw) {
		b = len(raw)
	}
	return strings.TrimSpace(string(raw[a:b]))
}

// pair is a (row, value) entry of a COLUMNS, RHS or RANGES line.
type pair struct{ row, value string }

// entries splits the fields after a line's first name into (row, value) pairs: fields f in
// free format, fields 3-6 in fixed format. ok is false when they do not pair up.
func (p *parser) entries(raw []byte, f []string) (pairs []pair, ok bool) {
	if p.fixed {
		for k := 3; k <= 5; k += 2 {
			row, val := fixedField(raw, k), fixedField(raw, k+1)
			if row == "" && val == "" && k == 5 {
				break
			}
			if row == "" || val == "" {
				return nil, false
			}
			pairs = append(pairs, pair{row, val})
		}
		return pairs, true
	}
	if len(f) == 0 || len(f)%2 != 0 || len(f) > 4 {
		return nil, false
	}
	for k := 0; k < len(f); k += 2 {
		pairs = append(pairs, pair{f[k], f[k+1]})
	}
	return pairs, true
}
