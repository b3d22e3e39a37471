package pipeline

import (
	"fmt"
	"time"

	pl "github.com/memsched/memsched/instances/pipeline"
)

// RunAll runs the named strategies on p and returns their outcomes in the order of names.
// Under a deadline the others run first, each with an equal share of half the time left then
// (of all of it when the exact search is not asked for; a share it does not use passes to the
// next), and the exact search last with everything left: on a random 2001-stage chain with
// recomputation the uniform split's part tables alone take 76 s, and when each strategy had
// the whole limit, `--algo all` with 2 s or 20 s had no plan at all while `--algo exact` alone
// answered with its seed (62.874 s) in 2 s. The exact search is last because its seed,
// completed when found, is the plan a stopped run still has. Without a deadline the order is
// the same and nothing is stopped.
func RunAll(p *pl.Problem, names []string, o Options) ([]*Outcome, error) {
	outs := make([]*Outcome, len(names))
	var others []int
	exact := -1
	for i, n := range names {
		if _, ok := Lookup(n); !ok {
			return nil, fmt.Errorf("pipeline: unknown strategy %q", n)
		}
		if n == "exact" {
			exact = i
		} else {
			others = append(others, i)
		}
	}
	var half time.Time // the others' end: half the time left, or all of it without the exact search
	switch {
	case o.Deadline.IsZero():
	case exact >= 0:
		half = time.Now().Add(time.Until(o.Deadline) / 2)
	default:
		half = o.Deadline
	}
	for k, i := range others {
		so := o
		if !half.IsZero() {
			so.Deadline = time.Now().Add(time.Until(half) / time.Duration(len(others)-k))
		}
		st, _ := Lookup(names[i])
		out, err := st.Run(p, so)
		if err != nil {
			return nil, err
		}
		outs[i] = out
	}
	if exact >= 0 {
		st, _ := Lookup("exact")
		out, err := st.Run(p, o)
		if err != nil {
			return nil, err
		}
		outs[exact] = out
	}
	return outs, nil
}
