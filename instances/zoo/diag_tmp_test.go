package zoo_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/memsched/memsched/heuristics/offload"
	"github.com/memsched/memsched/instances/zoo"
)

func TestDiagTable1(t *testing.T) {
	for _, r := range zoo.Table1() {
		p, err := zoo.Table1Problem(r)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		sel, _, g, err := offload.Greedy(p, true)
		el := time.Since(t0)
		if err != nil {
			fmt.Println(r.Kind, r.Depth, r.Batch, "greedy:", err)
			continue
		}
		_, _, gs, err2 := offload.Greedy(p, false)
		_, l2l, _ := offload.L2L(p)
		_, _, gr, _ := offload.GreedyReserve(p, true)
		fmt.Printf("  reserve %.0f (%+.1f%%)\n", gr.Period*1000, 100*(gr.Period*1000/r.SumU-1))
		n0, n1 := 0, 0
		for _, s := range sel {
			if s[0] {
				n0++
			}
			if s[1] {
				n1++
			}
		}
		fmt.Printf("%s %d/%d Σu %.0f greedy %.0f (%+.1f%%) g* %.0f %v l2l %.0f  sel0 %d sel1 %d  %v\n", r.Kind, r.Depth, r.Batch, r.SumU, g.Period*1000, 100*(g.Period*1000/r.SumU-1), gs.Period*1000, err2, l2l.Period*1000, n0, n1, el)
	}
}
