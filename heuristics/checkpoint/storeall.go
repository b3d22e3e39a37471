// Package checkpoint builds the rematerialization baselines that 004 §5.4 compares rotor
// against: PyTorch without checkpointing (store-all), PyTorch's checkpoint_sequential, and
// revolve. Each returns a plain sequence of 004's operations; callers replay it with
// verify.Remat.
package checkpoint

import (
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/schedule"
)

// StoreAll is training without rematerialization: F_all^1 … F_all^{L+1}, then
// B^{L+1} … B^1. Its makespan is Σ(u_f + u_b) and its peak the largest memory of the chain.
func StoreAll(c *instances.Chain) schedule.Sequence {
	n := c.Len()
	seq := make(schedule.Sequence, 0, 2*n)
	for l := 1; l <= n; l++ {
		seq = append(seq, schedule.Op{Kind: schedule.Fall, Stage: l})
	}
	for l := n; l >= 1; l-- {
		seq = append(seq, schedule.Op{Kind: schedule.B, Stage: l})
	}
	return seq
}
