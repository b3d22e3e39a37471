package actoffload_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	heur "github.com/memsched/memsched/heuristics/actoffload"
	act "github.com/memsched/memsched/instances/actoffload"
	leveract "github.com/memsched/memsched/lever/actoffload"
	"github.com/memsched/memsched/verify/timed"
)

// TestStrategies: the names are unique and found by Lookup; --algo all and certify run what
// the issue lists; on 40 random small problems every strategy's schedule passes verify/timed
// with the figures Run reports, the exact search is beaten by no no-wait strategy and no
// strategy beats the event search's optimum, and "none" is feasible
// exactly when everything fits.
func TestStrategies(t *testing.T) {
	assert.Equal(t, []string{"greedy", "dynprog", "vdnn", "split", "exact"}, leveract.Names(leveract.InAll))
	assert.Equal(t, []string{"none", "greedy", "dynprog", "vdnn", "split", "exact"}, leveract.Names(leveract.InCertify))
	assert.Len(t, leveract.Names(0), len(leveract.Strategies))
	r := rand.New(rand.NewPCG(20, 1))
	for k := 0; k < 40; k++ {
		p := act.Random(r, 1+r.IntN(4), 1)
		best := map[string]float64{}
		for _, st := range leveract.Strategies {
			got, ok := leveract.Lookup(st.Name)
			require.True(t, ok)
			assert.Equal(t, st.Name, got.Name)
			out, err := st.Run(p, leveract.Options{})
			require.NoError(t, err, "%d %s", k, st.Name)
			if st.Name == "none" {
				assert.Equal(t, p.Peak() <= p.MGPU, out.Result.Feasible, "%d", k)
			}
			if !out.Result.Feasible {
				continue
			}
			rep, err := timed.Check(p, out.Result.Schedule)
			require.NoError(t, err, "%d %s", k, st.Name)
			assert.Equal(t, rep, out.Result.Report)
			best[st.Name] = rep.Makespan
		}
		// The exact search is optimal among no-wait schedules (every strategy but the split's
		// joined ones); the event search's optimum is below them all.
		if e, ok := best["exact"]; ok {
			for name, m := range best {
				if name != "split" {
					assert.GreaterOrEqual(t, m, e*(1-1e-9), "%d: %s beats the exact search", k, name)
				}
			}
			ev, err := heur.EventSearch(p, heur.EventOptions{})
			require.NoError(t, err)
			require.True(t, ev.Complete)
			for name, m := range best {
				assert.GreaterOrEqual(t, m, ev.Bound*(1-1e-9), "%d: %s below the optimum", k, name)
			}
		}
	}
}
