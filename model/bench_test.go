package model_test

import (
	"io"
	"testing"

	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/mpsfile"
)

// bigModel has 10^5 variables and 10^5 rows of 10 terms each: 10^6 nonzeros.
func bigModel() *model.Model {
	const n = 100_000
	m := model.New("big")
	vars := make([]model.Var, n)
	for j := range vars {
		vars[j] = m.AddContinuous("", 0, float64(1+j%7))
	}
	var e, obj model.Expr
	for i := 0; i < n; i++ {
		e.Reset()
		for k := 0; k < 10; k++ {
			e.Add(vars[(i*7919+k*104729)%n], float64(1+(i+k)%5))
		}
		m.AddLE("", e, float64(10+i%13))
	}
	for j := 0; j < n; j += 3 {
		obj.Add(vars[j], -1)
	}
	m.SetObjective(model.Minimize, obj)
	return m
}

// BenchmarkBuild: target < 300 ms (issue 3).
func BenchmarkBuild(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if m := bigModel(); m.NumNonzeros() != 1_000_000 {
			b.Fatal(m.NumNonzeros())
		}
	}
}

// BenchmarkWriteMPS: target < 1 s (issue 3).
func BenchmarkWriteMPS(b *testing.B) {
	m := bigModel()
	b.ReportAllocs()
	for b.Loop() {
		if err := mpsfile.Write(io.Discard, m); err != nil {
			b.Fatal(err)
		}
	}
}
