package pipeline

import (
	"math"

	pl "github.com/memsched/memsched/instances/pipeline"
)

// sim times a contiguous pipeline under a named schedule from its parts' durations alone: the
// planners' inner loop (verify/pipeline replays the plan they return, op by op). It keeps its
// buffers between calls.
type sim struct {
	m     int
	sched pl.Schedule
	// orders[S][k] is GPU k's order of actions in a pipeline of S GPUs: μ for a forward,
	// −1−μ for a backward.
	orders map[int][][]int32
	arrF   []float64 // arrF[k*m+μ]: a^{s_k−1}(μ) is on GPU k
	arrB   []float64 // arrB[k*m+μ]: δ^{e_k}(μ) is on GPU k
	ptr    []int
	free   []float64
	lf, lb []float64
}

func newSim(m int, s pl.Schedule) *sim {
	return &sim{m: m, sched: s, orders: map[int][][]int32{}}
}

func (s *sim) order(S int) [][]int32 {
	if o, ok := s.orders[S]; ok {
		return o
	}
	o := make([][]int32, S)
	for k := range o {
		w := s.m
		if s.sched == pl.OneFOneB {
			w = min(s.m, S-k)
		}
		as := make([]int32, 0, 2*s.m)
		for mu := 0; mu < w; mu++ {
			as = append(as, int32(mu))
		}
		for j := 0; j < s.m-w; j++ {
			as = append(as, int32(-1-j), int32(w+j))
		}
		for j := s.m - w; j < s.m; j++ {
			as = append(as, int32(-1-j))
		}
		o[k] = as
	}
	s.orders[S] = o
	return o
}

// run returns the makespan of the pipeline whose GPU k runs forwards of f[k] and backwards of
// b[k] seconds, with cut k (between GPUs k and k+1) taking cf[k] forward and cb[k] backward.
//
// With k0 > 0 it is the relaxation the search bounds a partial plan with: GPUs 0..k0−1 are
// given zero durations and free links among them (their parts are not chosen yet), GPU k0's
// forwards may not start before release, and the backward of the last micro-batch still has
// tail seconds to run below GPU k0 after cut k0−1. Every time of the relaxation is at most the
// same time in any completion (longest paths in an event graph grow with its weights), so the
// value returned — max(the relaxation's makespan, end of B_{k0}(m−1) + cb[k0−1] + tail) —
// bounds every completion's makespan from below.
func (s *sim) run(f, b, cf, cb []float64, k0 int, release, tail float64) float64 {
	S := len(f)
	m := s.m
	ord := s.order(S)
	n := S * m
	if cap(s.arrF) < n {
		s.arrF, s.arrB = make([]float64, n), make([]float64, n)
	}
	arrF, arrB := s.arrF[:n], s.arrB[:n]
	nan := math.NaN()
	for i := range arrF {
		arrF[i], arrB[i] = nan, nan
	}
	for mu := 0; mu < m; mu++ {
		arrF[mu] = 0
		if k0 == 0 {
			arrF[mu] = release
		}
	}
	if cap(s.ptr) < S {
		s.ptr, s.free = make([]int, S), make([]float64, S)
	}
	ptr, free := s.ptr[:S], s.free[:S]
	for k := range ptr {
		ptr[k], free[k] = 0, 0
	}
	if cap(s.lf) < S {
		s.lf, s.lb = make([]float64, S), make([]float64, S)
	}
	lf, lb := s.lf[:S], s.lb[:S] // when each cut's forward and backward link is free
	for k := range lf {
		lf[k], lb[k] = 0, 0
	}
	var makespan, endB0 float64
	done, total := 0, 2*n
	for done < total {
		progress := false
		for k := 0; k < S; k++ {
			as := ord[k]
			for ptr[k] < len(as) {
				a := as[ptr[k]]
				var arr float64
				if a >= 0 {
					arr = arrF[k*m+int(a)]
				} else {
					arr = arrB[k*m+int(-1-a)]
				}
				if arr != arr { // NaN: not there yet
					break
				}
				start := max(free[k], arr)
				var end float64
				if a >= 0 {
					mu := int(a)
					end = start + f[k]
					if k+1 < S {
						t := max(end, lf[k]) + cf[k]
						lf[k] = t
						if k+1 == k0 {
							t = max(t, release)
						}
						arrF[(k+1)*m+mu] = t
					} else {
						arrB[k*m+mu] = end
					}
				} else {
					mu := int(-1 - a)
					end = start + b[k]
					if k > 0 {
						t := max(end, lb[k-1]) + cb[k-1]
						lb[k-1] = t
						arrB[(k-1)*m+mu] = t
					}
					if k == k0 && mu == m-1 {
						endB0 = end
					}
				}
				free[k] = end
				makespan = max(makespan, end)
				ptr[k]++
				done++
				progress = true
			}
		}
		if !progress {
			panic("pipeline: sim: a named order deadlocked")
		}
	}
	if k0 > 0 {
		makespan = max(makespan, endB0+cb[k0-1]+tail)
	}
	return makespan
}
