//go:build highs

package highs

import (
	"testing"

	"github.com/memsched/memsched/model"
)

// BenchmarkPassModel: handing a 10^5-variable, 10^6-nonzero model to HiGHS through lanl/highs
// (model building excluded; HiGHS's own copy and checks included).
func BenchmarkPassModel(b *testing.B) {
	const n = 100_000
	m := model.New("big")
	vars := make([]model.Var, n)
	for j := range vars {
		vars[j] = m.AddContinuous("", 0, float64(1+j%7))
	}
	var e model.Expr
	for i := 0; i < n; i++ {
		e.Reset()
		for k := 0; k < 10; k++ {
			e.Add(vars[(i*7919+k*104729)%n], float64(1+(i+k)%5))
		}
		m.AddLE("", e, float64(10+i%13))
	}
	b.ReportAllocs()
	for b.Loop() {
		h, err := newHandle()
		if err != nil {
			b.Fatal(err)
		}
		if err := pass(h, m); err != nil {
			b.Fatal(err)
		}
		h.Close()
	}
}
