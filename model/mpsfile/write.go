// Package mpsfile reads and writes models in free MPS format.
//
// Writing follows the conventions that HiGHS, CBC, GLPK (glpsol --freemps), CPLEX and Gurobi
// share: an OBJSENSE section for maximization, the objective as the first N row, integer and
// binary columns between MARKER INTORG/INTEND with explicit bounds (an integer column without
// bounds means binary to some old readers), ranged rows as G rows with a RANGES entry, free rows
// as extra N rows, and the objective constant c₀ as the objective row's RHS with its sign
// flipped (RHS = −c₀). Names are made legal (no whitespace, not empty, not starting with '$')
// and unique deterministically: an illegal character becomes '_', a clash gets "_2", "_3", …
// Numbers are written in shortest round-trip form, so write → read is exact.
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

// objName is the objective row's name; a row that would clash is renamed.
const objName = "obj"

// Write writes m in free MPS format. It fails if m does not validate.
func Write(w io.Writer, m *model.Model) error {
	if err := m.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	n, r := m.NumVars(), m.NumRows()
	taken := map[string]bool{objName: true}
	cols := make([]string, n)
	for j := range cols {
		cols[j] = legal(m.VarName(model.Var(j)), taken)
	}
	rows := make([]string, r)
	for i := range rows {
		rows[i] = legal(m.RowName(i), taken)
	}
	name := strings.Join(strings.Fields(m.Name), "_")
	if name == "" {
		name = "memsched"
	}
	fmt.Fprintf(bw, "NAME %s\n", name)
	for _, c := range m.Comments {
		bw.WriteString("* " + strings.Join(strings.Fields(c), " ") + "\n")
	}
	sense, cost, offset := m.Objective()
	if sense == model.Maximize {
		bw.WriteString("OBJSENSE\n    MAX\n")
	}
	bw.WriteString("ROWS\n N  " + objName + "\n")
	kinds := make([]byte, r)
	for i := 0; i < r; i++ {
		lo, hi := m.RowBounds(i)
		switch {
		case lo == hi:
			kinds[i] = 'E'
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			kinds[i] = 'N'
		case math.IsInf(lo, -1):
			kinds[i] = 'L'
		default:
			kinds[i] = 'G' // with a RANGES entry when hi is finite too
		}
		fmt.Fprintf(bw, " %c  %s\n", kinds[i], rows[i])
	}
	// Column-wise entries from the row-wise storage.
	start, index, value := m.CSR()
	counts := make([]int, n+1)
	for _, j := range index {
		counts[j+1]++
	}
	for j := 0; j < n; j++ {
		counts[j+1] += counts[j]
	}
	colRow := make([]int32, len(index))
	colVal := make([]float64, len(index))
	next := append([]int(nil), counts[:n]...)
	for i := 0; i < r; i++ {
		for k := start[i]; k < start[i+1]; k++ {
			j := index[k]
			colRow[next[j]], colVal[next[j]] = int32(i), value[k]
			next[j]++
		}
	}
	bw.WriteString("COLUMNS\n")
	inInt := false
	markers := 0
	num := make([]byte, 0, 32)
	for j := 0; j < n; j++ {
		isInt := m.VarType(model.Var(j)) != model.Continuous
		if isInt != inInt {
			if isInt {
				entry(bw, fmt.Sprintf("MARKER%d", markers), "'MARKER'", []byte("'INTORG'"))
			} else {
				entry(bw, fmt.Sprintf("MARKER%d", markers), "'MARKER'", []byte("'INTEND'"))
			}
			markers++
			inInt = isInt
		}
		wrote := false
		if cost[j] != 0 {
			entry(bw, cols[j], objName, strconv.AppendFloat(num[:0], cost[j], 'g', -1, 64))
			wrote = true
		}
		for k := counts[j]; k < counts[j+1]; k++ {
			entry(bw, cols[j], rows[colRow[k]], strconv.AppendFloat(num[:0], colVal[k], 'g', -1, 64))
			wrote = true
		}
		if !wrote {
			// An empty column must still be declared: a zero objective entry does it.
			entry(bw, cols[j], objName, []byte("0"))
		}
	}
	if inInt {
		entry(bw, fmt.Sprintf("MARKER%d", markers), "'MARKER'", []byte("'INTEND'"))
	}
	bw.WriteString("RHS\n")
	if offset != 0 {
		entry(bw, "RHS", objName, []byte(fmtNum(-offset)))
	}
	for i := 0; i < r; i++ {
		lo, hi := m.RowBounds(i)
		var rhs float64
		switch kinds[i] {
		case 'E', 'G':
			rhs = lo
		case 'L':
			rhs = hi
		default:
			continue
		}
		if rhs != 0 {
			entry(bw, "RHS", rows[i], []byte(fmtNum(rhs)))
		}
	}
	ranged := false
	for i := 0; i < r; i++ {
		lo, hi := m.RowBounds(i)
		if kinds[i] == 'G' && !math.IsInf(hi, 1) {
			if !ranged {
				bw.WriteString("RANGES\n")
				ranged = true
			}
			entry(bw, "RNG", rows[i], []byte(fmtNum(hi-lo)))
		}
	}
	bw.WriteString("BOUNDS\n")
	for j := 0; j < n; j++ {
		writeBounds(bw, m, model.Var(j), cols[j])
	}
	bw.WriteString("ENDATA\n")
	return bw.Flush()
}

func writeBounds(bw *bufio.Writer, m *model.Model, v model.Var, name string) {
	lb, ub := m.Bounds(v)
	t := m.VarType(v)
	b := func(kind string, x float64) { fmt.Fprintf(bw, " %s BND       %s  %s\n", kind, pad(name), fmtNum(x)) }
	flag := func(kind string) { fmt.Fprintf(bw, " %s BND       %s\n", kind, name) }
	switch {
	case t == model.Binary && lb == 0 && ub == 1:
		flag("BV")
	case lb == ub:
		b("FX", lb)
	case math.IsInf(lb, -1) && math.IsInf(ub, 1):
		flag("FR")
	default:
		if math.IsInf(lb, -1) {
			flag("MI")
		} else if lb != 0 || t != model.Continuous {
			b("LO", lb)
		}
		if !math.IsInf(ub, 1) {
			b("UP", ub)
		} else if t != model.Continuous {
			flag("PL")
		}
	}
}

// entry writes a data line "    name1  name2  value" with the names padded to the fixed-MPS
// field width (8): readers that guess between fixed and free format (CBC's) then parse short
// names right, and free-format readers do not care.
func entry(bw *bufio.Writer, a, b string, val []byte) {
	bw.WriteString("    ")
	bw.WriteString(pad(a))
	bw.WriteString("  ")
	bw.WriteString(pad(b))
	bw.WriteString("  ")
	bw.Write(val)
	bw.WriteByte('\n')
}

func pad(s string) string {
	if len(s) >= 8 {
		return s
	}
	return s + "        "[:8-len(s)]
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// legal makes name a legal, unused MPS name and records it in taken.
func legal(name string, taken map[string]bool) string {
	b := []byte(name)
	for i, c := range b {
		if c <= ' ' || c > '~' {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" || s[0] == '$' || s[0] == '*' {
		s = "_" + s
	}
	base := s
	for k := 2; taken[s]; k++ {
		s = base + "_" + strconv.Itoa(k)
	}
	taken[s] = true
	return s
}
