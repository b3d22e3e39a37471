package actoffload

import (
	"sort"

	act "github.com/memsched/memsched/instances/actoffload"
)

// VDNNVariant selects which of VDNN's offload sets are tried.
type VDNNVariant int

const (
	// VDNNBoth tries, for every threshold, both the full set and every other member (001 §6.1).
	VDNNBoth VDNNVariant = iota
	// VDNNAll offloads every activation whose ratio is at or above the threshold (vDNN's "all").
	VDNNAll
	// VDNNHalf offloads every other one of them, by index (vDNN++'s every-other-convolution).
	VDNNHalf
)

// VDNN is 001 §6.1's VDNN baseline: with the ratios r_i = u_{F_i}/|x_i| (the forward time
// that can hide the offload of its input), for every threshold θ among the ratios it builds the
// no-wait ordered schedule that offloads {i : r_i ≥ θ} (and, for VDNNHalf/VDNNBoth, every
// other member of that set by increasing index), and returns the best feasible one (shortest
// makespan, then fewest bytes). Sets smaller in volume than M_peak − M_GPU cannot be feasible
// (001 Prop. 2) and are skipped.
func VDNN(p *act.Problem, v VDNNVariant) (*Result, error) {
	return VDNNUntil(p, v, nil)
}

// VDNNUntil is VDNN ended when stop closes (checked before each candidate set's schedule,
// O(n) each, 2n of them: minutes on a 20 001-stage chain): the result is then the best of the
// sets tried, with Stopped set.
func VDNNUntil(p *act.Problem, v VDNNVariant, stop <-chan struct{}) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	need := p.Peak() - p.MGPU
	n := p.L() + 1
	var cand []int
	for i := 0; i < n; i++ {
		if p.X[i] > 0 {
			cand = append(cand, i)
		}
	}
	ratio := func(i int) float64 { return p.UF[i] / float64(p.X[i]) }
	byRatio := append([]int(nil), cand...)
	sort.SliceStable(byRatio, func(a, b int) bool { return ratio(byRatio[a]) > ratio(byRatio[b]) })
	best := &Result{}
	try := func(set []int) error {
		var vol int64
		for _, j := range set {
			vol += p.X[j]
		}
		if vol < need || best.Stopped {
			return nil
		}
		if closed(stop) {
			best.Stopped = true
			return nil
		}
		r, err := orderedUntil(p, set, stop)
		if err != nil {
			return err
		}
		if r.Stopped {
			best.Stopped = true
			return nil
		}
		if r.Feasible && (!best.Feasible || r.Report.Makespan < best.Report.Makespan ||
			(r.Report.Makespan == best.Report.Makespan && r.Report.OffloadedBytes < best.Report.OffloadedBytes)) {
			best = r
		}
		return nil
	}

	if err := try(nil); err != nil {
		return nil, err
	}
	var vol int64
	for t := 0; t < len(byRatio) && !best.Stopped; t++ {
		vol += p.X[byRatio[t]]
		if t+1 < len(byRatio) && ratio(byRatio[t+1]) == ratio(byRatio[t]) {
			continue // the threshold takes every activation of equal ratio at once
		}
		if vol < need {
			continue // neither the set nor its every other member frees enough (Prop. 2)
		}
		if closed(stop) {
			best.Stopped = true
			break
		}
		set := append([]int(nil), byRatio[:t+1]...)
		sort.Ints(set)
		if v != VDNNHalf {
			if err := try(set); err != nil {
				return nil, err
			}
		}
		if v != VDNNAll {
			var half []int
			for k := 0; k < len(set); k += 2 {
				half = append(half, set[k])
			}
			if err := try(half); err != nil {
				return nil, err
			}
		}
	}
	return best, nil
}
