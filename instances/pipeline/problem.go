package pipeline

import (
	"fmt"
	"math"
	"strings"

	"github.com/memsched/memsched/instances"
)

// Schedule is the order in which every GPU runs its micro-batches' forwards and backwards.
type Schedule uint8

const (
	// OneFOneB is PyTorch's Schedule1F1B (Megatron's non-interleaved order): GPU k of S runs
	// w = min(m, S−k) forwards F(0..w−1), then B(j), F(w+j) for j = 0..m−w−1, then the
	// remaining backwards in order. At most w micro-batches are in flight on GPU k.
	OneFOneB Schedule = iota
	// GPipe is PyTorch's ScheduleGPipe: F(0..m−1), then B(0..m−1); m micro-batches in flight.
	GPipe
)

// Schedules lists the named schedules.
var Schedules = []Schedule{OneFOneB, GPipe}

func (s Schedule) String() string {
	switch s {
	case OneFOneB:
		return "1f1b"
	case GPipe:
		return "gpipe"
	}
	return fmt.Sprintf("Schedule(%d)", int(s))
}

// ParseSchedule reads "1f1b" or "gpipe" (case-insensitive).
func ParseSchedule(s string) (Schedule, error) {
	switch strings.ToLower(s) {
	case "1f1b":
		return OneFOneB, nil
	case "gpipe":
		return GPipe, nil
	}
	return 0, fmt.Errorf("pipeline: unknown schedule %q (want 1f1b or gpipe)", s)
}

// MarshalText writes the schedule's name.
func (s Schedule) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a schedule's name.
func (s *Schedule) UnmarshalText(b []byte) error {
	v, err := ParseSchedule(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// Limits of the instance: beyond them a plan is refused, never computed with wrapped sums.
const (
	// MaxGPUs is the largest P.
	MaxGPUs = 4096
	// MaxMicroBatches is the largest m.
	MaxMicroBatches = 1 << 20
)

// Problem is one instance of SPEC §7. Sizes are bytes, times seconds, Bandwidth bytes per
// second.
type Problem struct {
	// Chain is the profile of one micro-batch (stages 1..L and the loss stage L+1); each
	// stage's W is its persistent bytes w_ℓ (parameters, gradients and optimizer state, as
	// the user counts them), held by the GPU that runs it at all times.
	Chain *instances.Chain
	// GPUs is P, the number of identical GPUs available (a plan may use fewer).
	GPUs int
	// Memory is M, every GPU's memory in bytes.
	Memory int64
	// Bandwidth is β, the rate of the link between consecutive GPUs in each direction;
	// +Inf: free links (transfers take no time).
	Bandwidth float64
	// MicroBatches is m, the number of micro-batches of one iteration.
	MicroBatches int
	// Schedule is the order each GPU runs its actions in.
	Schedule Schedule
}

// L returns the number of stages without the loss stage.
func (p *Problem) L() int { return p.Chain.Len() - 1 }

// FieldError is an instance value out of its domain: the field (as the plan file and the
// command line name it), the value and why.
type FieldError struct {
	Field, Value, Msg string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("pipeline: %s = %s: %s", e.Field, e.Value, e.Msg)
}

// Validate checks the instance: a valid chain with at least one stage before the loss,
// 1 ≤ P ≤ MaxGPUs, 0 < M ≤ instances.MaxBytes, β > 0 (+Inf allowed), 1 ≤ m ≤ MaxMicroBatches
// and a known schedule. The first bad field is returned as a *FieldError (the chain's own
// errors as they are).
func (p *Problem) Validate() error {
	if p.Chain == nil {
		return &FieldError{"chain", "none", "a chain is required"}
	}
	if err := p.Chain.Validate(); err != nil {
		return err
	}
	if p.Chain.Len() < 2 {
		return &FieldError{"chain", fmt.Sprintf("%d stage", p.Chain.Len()), "a pipeline needs at least one stage before the loss stage"}
	}
	if p.GPUs < 1 || p.GPUs > MaxGPUs {
		return &FieldError{"gpus", fmt.Sprint(p.GPUs), fmt.Sprintf("must be in 1..%d", MaxGPUs)}
	}
	if p.Memory <= 0 || p.Memory > instances.MaxBytes {
		return &FieldError{"memory", fmt.Sprint(p.Memory), "must be a positive number of bytes up to 2^60 (1 EiB)"}
	}
	if !(p.Bandwidth > 0) {
		return &FieldError{"bandwidth", fmt.Sprint(p.Bandwidth), "must be positive (B/s; +Inf for free links)"}
	}
	if p.MicroBatches < 1 || p.MicroBatches > MaxMicroBatches {
		return &FieldError{"micro_batches", fmt.Sprint(p.MicroBatches), fmt.Sprintf("must be in 1..%d", MaxMicroBatches)}
	}
	if p.Schedule != OneFOneB && p.Schedule != GPipe {
		return &FieldError{"schedule", p.Schedule.String(), "unknown schedule (want 1f1b or gpipe)"}
	}
	return nil
}

// Transfer returns the time to move size bytes over one link: size/β, 0 when β = +Inf.
func (p *Problem) Transfer(size int64) float64 {
	if math.IsInf(p.Bandwidth, 1) || size == 0 {
		return 0
	}
	return float64(size) / p.Bandwidth
}

// InFlight returns how many micro-batches GPU k of a contiguous pipeline of S GPUs holds at
// most under the problem's schedule: min(m, S−k) for 1F1B, m for GPipe.
func (p *Problem) InFlight(k, S int) int {
	if p.Schedule == GPipe {
		return p.MicroBatches
	}
	return min(p.MicroBatches, S-k)
}
