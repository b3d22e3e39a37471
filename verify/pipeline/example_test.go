package pipeline_test

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
	vpl "github.com/memsched/memsched/verify/pipeline"
)

// Replaying SPEC §7's fourth hand-checked case: four stages (u_f = 1, u_b = 2, ω_a = ω_ā = 1)
// on two GPUs joined by 1 B/s links, four micro-batches in the 1F1B order.
func ExampleReplay() {
	c := &instances.Chain{}
	for range 4 {
		c.Stages = append(c.Stages, instances.Stage{UF: 1, UB: 2, A: 1, ABar: 1})
	}
	c.Stages = append(c.Stages, instances.Stage{Name: "loss"})
	p := &pl.Problem{Chain: c, GPUs: 2, Memory: 4, Bandwidth: 1, MicroBatches: 4, Schedule: pl.OneFOneB}
	res, err := vpl.Replay(p, schedule.NewContiguous([]int{2, 4}))
	if err != nil {
		panic(err)
	}
	fmt.Println("makespan", res.Makespan, "period", res.PeriodExact, "peaks", res.Peak, "fits", res.Fits())
	// A non-contiguous plan: stages 1 and 3 on GPU 0, 2 and 4 on GPU 1, free links, GPipe
	// (PyTorch's looped breadth-first order).
	p.Bandwidth, p.Schedule, p.Memory = math.Inf(1), pl.GPipe, 100
	loop := &schedule.Pipeline{Parts: []schedule.Part{{First: 1, Last: 1, GPU: 0}, {First: 2, Last: 2, GPU: 1}, {First: 3, Last: 3, GPU: 0}, {First: 4, Last: 4, GPU: 1}}}
	res, err = vpl.Replay(p, loop)
	if err != nil {
		panic(err)
	}
	fmt.Println("looped makespan", res.Makespan, "peaks", res.Peak)
	// Output:
	// makespan 32 period 13/2 peaks [4 3] fits true
	// looped makespan 27 peaks [12 16]
}
