package reduce

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
)

// maxExactTime is the largest sum of values the pipeline reductions take: their values become
// durations (float64), exact up to 2^53.
const maxExactTime = 1 << 53

// PipelineThreePartition is SPEC §7's reduction from 3-Partition to the non-contiguous
// allocation problem of pipelined model parallelism (P‖Cmax inside it). For u_1..u_{3q} with
// Σ u = qV it builds the chain of L = 3q stages, stage ℓ with u_f = u_ℓ and u_b = 0 (its
// "layer time" u_ℓ), every tensor of 1 byte (a^0, a, ā, δ; the loss stage's ā 0), no
// weights, no overheads, on P = q GPUs with free links (β = +Inf), m micro-batches under 1F1B,
// and M = 2Lm + L + 3 bytes, which every allocation fits (no part holds more than 1 + its
// length bytes per micro-batch, and none of its operations adds more than 2: the memory never
// binds). The steady-state period of an allocation is its largest GPU load Σ u (no order
// does better, and the modulo order reaches it), so some allocation has period V = target
// iff the values split into q sets of sum V; with every u_ℓ strictly between V/4 and V/2
// (the strong form) those sets are triples. The instance is strongly NP-hard to decide.
func PipelineThreePartition(us []int64, m int) (p *pl.Problem, target float64, err error) {
	if len(us) == 0 || len(us)%3 != 0 {
		return nil, 0, fmt.Errorf("reduce: 3-partition needs 3q values, got %d", len(us))
	}
	q := len(us) / 3
	sum, err := pipelineValues("3-partition", us, int64(q))
	if err != nil {
		return nil, 0, err
	}
	return pipelineInstance("pipeline 3-partition", us, q, m, float64(sum/int64(q)))
}

// PipelineTwoPartition is the reduction from 2-Partition (SPEC §7: NP-hard for P = 2): for
// u_1..u_n with Σ u = 2V the chain of n stages of PipelineThreePartition's shape on P = 2 GPUs;
// some allocation has period V = target iff a subset of the values sums to V.
func PipelineTwoPartition(us []int64, m int) (p *pl.Problem, target float64, err error) {
	if len(us) < 2 {
		return nil, 0, fmt.Errorf("reduce: 2-partition needs at least 2 values, got %d", len(us))
	}
	sum, err := pipelineValues("2-partition", us, 2)
	if err != nil {
		return nil, 0, err
	}
	return pipelineInstance("pipeline 2-partition", us, 2, m, float64(sum/2))
}

// pipelineValues checks the values: positive, a sum that fits exact float64 times and divides
// into parts.
func pipelineValues(kind string, us []int64, parts int64) (int64, error) {
	sum, err := checkValues(kind, us, parts)
	if err != nil {
		return 0, err
	}
	if sum > maxExactTime {
		return 0, fmt.Errorf("reduce: %s values sum to %d, above 2^53: durations would not be exact", kind, sum)
	}
	return sum, nil
}

func pipelineInstance(name string, us []int64, gpus, m int, v float64) (*pl.Problem, float64, error) {
	if m < 1 || m > pl.MaxMicroBatches {
		return nil, 0, fmt.Errorf("reduce: micro-batches must be in 1..%d, got %d", pl.MaxMicroBatches, m)
	}
	L := len(us)
	c := &instances.Chain{Name: fmt.Sprintf("%s L=%d P=%d V=%g", name, L, gpus, v), A0: 1, Delta0: 1}
	for i, u := range us {
		c.Stages = append(c.Stages, instances.Stage{Name: fmt.Sprintf("u%d", i+1), UF: float64(u), A: 1, ABar: 1, Delta: 1})
	}
	c.Stages = append(c.Stages, instances.Stage{Name: "loss", Delta: 1})
	mem, ok := instances.MulBytes(int64(2*L), int64(m))
	if !ok || mem > instances.MaxBytes-int64(L)-3 {
		return nil, 0, fmt.Errorf("reduce: %d micro-batches of %d stages need more than 2^60 B", m, L)
	}
	p := &pl.Problem{Chain: c, GPUs: gpus, Memory: mem + int64(L) + 3, Bandwidth: math.Inf(1), MicroBatches: m, Schedule: pl.OneFOneB}
	if err := p.Validate(); err != nil {
		return nil, 0, fmt.Errorf("reduce: %s: %w", name, err)
	}
	return p, v, nil
}
