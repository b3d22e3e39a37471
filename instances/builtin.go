package instances

import (
	"bytes"
	_ "embed"
	"fmt"
)

//go:embed testdata/toy.json
var toyJSON []byte

// ToyBudget is the budget of 004 §3.2's example, 90 MiB.
const ToyBudget = 90 << 20

// Toy returns the toy chain of 004 Table 2 (6 fully-connected layers of a batch of 1000 on a
// V100, plus a zero-cost loss stage 7), sizes in MiB and times in ms as published (SPEC §0: the
// table's "MB" are MiB), converted to bytes and seconds.
//
// One value deviates from the table: it lists ā^4 = 10.66 < a^4 = 10.68, which the format
// rejects (ā includes a). The published results depend on ā^4 = 10.66 (peak 86.75 MiB at B^5)
// and on δ^4 = 10.68 (= a^4, ω_δ = ω_a), never on a plain a^4, so the toy keeps ā^4 = 10.66,
// δ^4 = 10.68 and sets a^4 = 10.66 (docs/format.md, "The toy chain").
func Toy() *Chain {
	c, err := ReadChain(bytes.NewReader(toyJSON), "toy.json")
	if err != nil {
		panic("instances: embedded toy chain: " + err.Error())
	}
	return c
}

// DefaultChain returns the embedded default instance of the CLI's main job (the toy chain).
func DefaultChain() *Chain { return Toy() }

// ToyJSON returns the embedded toy chain file as written by hand (MiB and ms).
func ToyJSON() []byte { return append([]byte(nil), toyJSON...) }

// Fig4Budget is the budget M = 15 of the Fig. 4 family.
const Fig4Budget = 15

// Fig4 returns the chain of 004 Fig. 4 (SPEC §1) for n ≥ 3: L = n+2 stages plus the loss
// stage L+1; u_b = 0 everywhere; u_f = 0 except u_f^1 = n−2 and u_f^2 = 2; every size ω = 3
// except ω^0 = ω^{L+1} = 0, ω^1 = 1 and ω^L = 4, with ω_ā = ω_a = ω_δ; no overheads. With
// budget Fig4Budget the best persistent makespan is 3n−2 and the optimum 2n+2, so persistent
// schedules lose up to a factor 3/2 (004 §4).
func Fig4(n int) (*Chain, error) {
	if n < 3 {
		return nil, fmt.Errorf("instances: fig4 needs n ≥ 3, got %d", n)
	}
	L := n + 2
	c := &Chain{Name: fmt.Sprintf("fig4 n=%d", n)}
	for l := 1; l <= L+1; l++ {
		var w int64 = 3
		switch l {
		case 1:
			w = 1
		case L:
			w = 4
		case L + 1:
			w = 0
		}
		s := Stage{Name: fmt.Sprintf("f%d", l), A: w, ABar: w, Delta: w}
		switch l {
		case 1:
			s.UF = float64(n - 2)
		case 2:
			s.UF = 2
		}
		c.Stages = append(c.Stages, s)
	}
	return c, nil
}
