package pipeline

import (
	"fmt"
	"math"

	"github.com/memsched/memsched/instances"
	pl "github.com/memsched/memsched/instances/pipeline"
	"github.com/memsched/memsched/schedule"
)

// Result is what replaying a well-formed plan gives.
type Result struct {
	// Makespan is the end of the last action of one iteration (m micro-batches), in seconds.
	Makespan float64
	// Period is the steady state's time per micro-batch (m → ∞): the maximum cycle mean of
	// the event graph (Period), NaN where the plan has no named periodic order (a GPU with
	// several parts, or explicit actions). PeriodExact is the same as an exact fraction of
	// the float64 inputs ("p/q").
	Period      float64
	PeriodExact string
	// Peak[g] is GPU g's largest memory in bytes (its w included; 0 for an unused GPU).
	Peak []int64
	// Parts are each part's durations and memory figures, in plan order.
	Parts []PartResult
	// Timeline[g] is GPU g's actions in its order with their start and end times.
	Timeline [][]Timed
	// Violation is the first memory overflow (the earliest action that overflows, ties by
	// GPU), nil when every GPU stays within M. A plan with a violation is not feasible, but
	// its times and peaks are still those of the replay.
	Violation *Violation
}

// Fits reports whether every GPU stays within the budget.
func (r *Result) Fits() bool { return r.Violation == nil }

// PartResult are one part's figures in the replay.
type PartResult struct {
	// F and B are the durations of the part's forward and backward phases (seconds).
	F, B float64
	// Held is what one micro-batch stores between them (bytes, its input included); W the
	// part's persistent bytes.
	Held, W int64
	// PeakF and PeakB are the largest memory of one micro-batch's own operations in each phase.
	PeakF, PeakB int64
}

// Timed is an action with its start and end times.
type Timed struct {
	schedule.Action
	Start, End float64
}

// Violation is a GPU whose memory exceeds the budget: during which action and operation, how
// much is in use, and the budget.
type Violation struct {
	GPU    int
	Action schedule.Action
	// Op is the index in the part's sequence of the operation at the peak (-1: the stored
	// state at the start of the action).
	Op     int
	OpText string
	Time   float64
	InUse  int64
	Budget int64
}

func (v *Violation) Error() string {
	op := "at its start"
	if v.Op >= 0 {
		op = fmt.Sprintf("during operation %d (%s)", v.Op, v.OpText)
	}
	return fmt.Sprintf("pipeline: GPU %d: action %v %s at t=%g: memory overflow: %s (%d B) in use exceeds the budget %s (%d B)",
		v.GPU, v.Action, op, v.Time, instances.FormatSize(v.InUse), v.InUse, instances.FormatSize(v.Budget), v.Budget)
}

// PlanError is a plan that is not well formed: parts that do not cover the chain in order, a
// GPU out of range, actions that are missing, repeated or out of order, or a deadlock.
type PlanError struct{ Msg string }

func (e *PlanError) Error() string { return "pipeline: " + e.Msg }

func planErrorf(format string, args ...any) error {
	return &PlanError{Msg: fmt.Sprintf(format, args...)}
}

// Replay replays plan on p (SPEC §7): every part's sequence op by op for the memory, every
// GPU's actions in their order (the plan's own Actions, or pl.Actions of the problem's
// schedule) with each action as soon as its input has arrived and its GPU is free, the links
// one transfer at a time in the order their sender produced them. It returns the makespan,
// the period, each GPU's peak and the first memory overflow (Result.Violation), or an error
// for a plan that is not well formed (*PlanError), a sequence that breaks the rules
// (*SequenceError) or an invalid problem.
//
// Memory is exact (int64 bytes); times are float64 sums, exact on integer instances; the
// period is computed in exact rationals of the float64 inputs.
func Replay(p *pl.Problem, plan *schedule.Pipeline) (*Result, error) {
	return replay(p, plan, true)
}

// replay is Replay, with the period computed or not (the referee needs makespans only).
func replay(p *pl.Problem, plan *schedule.Pipeline, withPeriod bool) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := checkParts(p, plan); err != nil {
		return nil, err
	}
	prof := make([]*profile, len(plan.Parts))
	res := &Result{Peak: make([]int64, p.GPUs), Parts: make([]PartResult, len(plan.Parts)), Period: math.NaN()}
	for j, pt := range plan.Parts {
		pr, err := replayPart(p.Chain, j, pt)
		if err != nil {
			return nil, err
		}
		prof[j] = pr
		res.Parts[j] = PartResult{F: pr.f, B: pr.b, Held: pr.held, W: pr.w, PeakF: pr.peakF, PeakB: pr.peakB}
	}
	actions, err := pl.Actions(plan, p.Schedule, p.MicroBatches, p.GPUs)
	if err != nil {
		return nil, err
	}
	if err := checkActions(p, plan, actions); err != nil {
		return nil, err
	}
	if err := simulate(p, plan, prof, actions, res); err != nil {
		return nil, err
	}
	memory(p, plan, prof, res)
	if withPeriod && plan.Actions == nil && plan.Contiguous() {
		res.Period, res.PeriodExact, err = period(p, prof)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// checkParts checks that the parts cover 1..L in order, each non-empty, on GPUs 0..P−1.
func checkParts(p *pl.Problem, plan *schedule.Pipeline) error {
	if plan == nil || len(plan.Parts) == 0 {
		return planErrorf("the plan has no parts")
	}
	L := p.L()
	next := 1
	for j, pt := range plan.Parts {
		if pt.First != next {
			return planErrorf("part %d starts at stage %d, want %d (parts cover stages 1..%d in order)", j, pt.First, next, L)
		}
		if pt.Last < pt.First || pt.Last > L {
			return planErrorf("part %d: last stage %d is not in %d..%d", j, pt.Last, pt.First, L)
		}
		if pt.GPU < 0 || pt.GPU >= p.GPUs {
			return planErrorf("part %d (stages %d–%d): GPU %d is not in 0..%d", j, pt.First, pt.Last, pt.GPU, p.GPUs-1)
		}
		next = pt.Last + 1
	}
	if next != L+1 {
		return planErrorf("the parts end at stage %d, want %d (the loss stage %d joins the last part)", next-1, L, L+1)
	}
	return nil
}

// checkActions checks that GPU g's list holds exactly the forwards and backwards of its parts
// for every micro-batch, each once, each backward after its forward.
func checkActions(p *pl.Problem, plan *schedule.Pipeline, actions [][]schedule.Action) error {
	m := p.MicroBatches
	if len(actions) > p.GPUs {
		return planErrorf("actions given for %d GPUs, the problem has %d", len(actions), p.GPUs)
	}
	seen := make([]int8, len(plan.Parts)*m*2)
	for g, as := range actions {
		for i, a := range as {
			if a.Part < 0 || a.Part >= len(plan.Parts) {
				return planErrorf("GPU %d: action %d (%v): part %d is not in 0..%d", g, i, a, a.Part, len(plan.Parts)-1)
			}
			if plan.Parts[a.Part].GPU != g {
				return planErrorf("GPU %d: action %d (%v): part %d is on GPU %d", g, i, a, a.Part, plan.Parts[a.Part].GPU)
			}
			if a.MicroBatch < 0 || a.MicroBatch >= m {
				return planErrorf("GPU %d: action %d (%v): micro-batch %d is not in 0..%d", g, i, a, a.MicroBatch, m-1)
			}
			k := (a.Part*m + a.MicroBatch) * 2
			if a.Backward {
				if seen[k] == 0 {
					return planErrorf("GPU %d: action %d (%v): the backward comes before its forward", g, i, a)
				}
				k++
			}
			if seen[k] != 0 {
				return planErrorf("GPU %d: action %d (%v) is repeated", g, i, a)
			}
			seen[k] = 1
		}
	}
	for k, s := range seen {
		if s == 0 {
			a := schedule.Action{Part: k / 2 / m, MicroBatch: k / 2 % m, Backward: k%2 == 1}
			return planErrorf("GPU %d: action %v is missing", plan.Parts[a.Part].GPU, a)
		}
	}
	return nil
}

// simulate times every action: as soon as its input is there and its GPU free.
func simulate(p *pl.Problem, plan *schedule.Pipeline, prof []*profile, actions [][]schedule.Action, res *Result) error {
	m := p.MicroBatches
	n := len(plan.Parts)
	nan := math.NaN()
	// arrF[j*m+μ]: a^{first_j −1}(μ) is on part j's GPU; arrB[j*m+μ]: δ^{last_j}(μ) is.
	arrF, arrB := make([]float64, n*m), make([]float64, n*m)
	for i := range arrF {
		arrF[i], arrB[i] = nan, nan
		if i < m {
			arrF[i] = 0
		}
	}
	type link struct{ from, to int }
	free := map[link]float64{}
	send := func(from, to int, t float64, size int64) float64 {
		if from == to {
			return t
		}
		l := link{from, to}
		start := max(t, free[l])
		free[l] = start + p.Transfer(size)
		return free[l]
	}
	next := make([]int, len(actions))
	gpuFree := make([]float64, len(actions))
	res.Timeline = make([][]Timed, p.GPUs)
	done, total := 0, 0
	for _, as := range actions {
		total += len(as)
	}
	for done < total {
		progress := false
		for g, as := range actions {
			for next[g] < len(as) {
				a := as[next[g]]
				k := a.Part*m + a.MicroBatch
				arr := arrF[k]
				if a.Backward {
					arr = arrB[k]
				}
				if math.IsNaN(arr) {
					break
				}
				pt := plan.Parts[a.Part]
				start := max(gpuFree[g], arr)
				var end float64
				if a.Backward {
					end = start + prof[a.Part].b
					if a.Part > 0 {
						prev := plan.Parts[a.Part-1]
						arrB[k-m] = send(g, prev.GPU, end, p.Chain.SizeDelta(prev.Last))
					}
				} else {
					end = start + prof[a.Part].f
					if a.Part+1 < n {
						arrF[k+m] = send(g, plan.Parts[a.Part+1].GPU, end, p.Chain.SizeA(pt.Last))
					} else {
						arrB[k] = end
					}
				}
				gpuFree[g] = end
				res.Timeline[g] = append(res.Timeline[g], Timed{Action: a, Start: start, End: end})
				res.Makespan = max(res.Makespan, end)
				next[g]++
				done++
				progress = true
			}
		}
		if !progress {
			for g, as := range actions {
				if next[g] < len(as) {
					a := as[next[g]]
					what := fmt.Sprintf("a^%d of micro-batch %d from part %d", plan.Parts[a.Part].First-1, a.MicroBatch, a.Part-1)
					if a.Backward {
						what = fmt.Sprintf("δ^%d of micro-batch %d from part %d", plan.Parts[a.Part].Last, a.MicroBatch, a.Part+1)
					}
					return planErrorf("deadlock: GPU %d waits at action %d (%v) for %s, which never comes", g, next[g], a, what)
				}
			}
		}
	}
	return nil
}

// memory replays each GPU's actions in order for its memory: at every operation, the stored
// state of every other micro-batch on the GPU plus the running one's own memory, plus Σ w.
// held counts, per part, the micro-batches between their forward and their backward.
func memory(p *pl.Problem, plan *schedule.Pipeline, prof []*profile, res *Result) {
	for g, tl := range res.Timeline {
		if len(tl) == 0 {
			continue
		}
		var w int64
		var local []int
		for j, pt := range plan.Parts {
			if pt.GPU == g {
				w += prof[j].w
				local = append(local, j)
			}
		}
		held := map[int]int64{}
		peak := int64(0)
		for _, t := range tl {
			pr := prof[t.Part]
			if t.Backward {
				held[t.Part]--
			}
			use := w
			for _, j := range local {
				x, _ := instances.MulBytes(held[j], prof[j].held)
				use = satAdd(use, x)
			}
			own, op := pr.peakF, pr.opF
			if t.Backward {
				own, op = pr.peakB, pr.opB
			}
			use = satAdd(use, own)
			peak = max(peak, use)
			if use > p.Memory && (res.Violation == nil || t.Start < res.Violation.Time) {
				text := ""
				if op >= 0 {
					text = pr.seq[op].String()
				}
				res.Violation = &Violation{GPU: g, Action: t.Action, Op: op, OpText: text, Time: t.Start, InUse: use, Budget: p.Memory}
			}
			if !t.Backward {
				held[t.Part]++
			}
		}
		res.Peak[g] = peak
	}
}

// satAdd returns a+b for sizes, saturated at instances.MaxBytes+1 (above every budget): the
// held states of m micro-batches may add up past int64.
func satAdd(a, b int64) int64 {
	if a > instances.MaxBytes || b > instances.MaxBytes || a+b > instances.MaxBytes {
		return instances.MaxBytes + 1
	}
	return a + b
}
