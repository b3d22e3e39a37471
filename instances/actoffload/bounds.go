package actoffload

import "math"

// Prop3 is 001 Prop. 3 with SPEC §2's reading (a factor 2, not 2^x):
// LB = max(Σ_i (u_{F_i} + u_{B_i}), 2 (M_peak − M_GPU)/β). Every valid schedule computes
// everything, and moves at least M_peak − M_GPU bytes out (Prop. 2) and back on one link.
func (p *Problem) Prop3() float64 {
	return math.Max(p.Compute(), 2*float64(max(0, p.Peak()-p.MGPU))/p.Beta)
}

// Fractional returns the optimum of the fractional relaxation (001 §4) in its fluid form, a
// certified lower bound on every schedule of Problem 1 (and of Problem 2), +Inf when even the
// relaxation has no schedule.
//
// The relaxation follows only C(t), the number of bytes on the CPU: it starts at 0, changes at
// rate at most β (one transfer at a time, 001 (B), (C)), and while operation k runs it must lie
// in [d_k, c_k], with d_k = max(0, m_k − M_GPU) (m_k = m_{F_i} or m_{B_i}: what does not fit
// must be away) and c_k the bytes that may be away then: Σ_{l≤i}|x_l| during F_i (what has
// been produced) and Σ_{l<i}|x_l| during B_i (x_i and x_{i+1} are read). Every Problem 1
// schedule gives such a C: count each offload as it streams out and each prefetch as it
// streams back; data leaves memory no earlier, and comes back (reserved) no later, than this.
// Unlike 001 §4, a partly sent x also leaves memory while the forward still reads it, which
// only relaxes further.
//
// The optimum waits only when it must: before operation k, the values C can have form an
// interval R; if R misses [d_k, c_k] the GPU idles for the distance over β, R widens by β per
// second of idling, and running the operation for u_k widens R by β u_k within [d_k, c_k].
// Idling earlier never helps (the widening would be clipped by the windows in between).
// Then OPT_frac = Σu + total idle ≥ Prop. 3: C must climb to max_k d_k = M_peak − M_GPU and
// come back to 0 (c = 0 during B_0).
func (p *Problem) Fractional() float64 {
	n := p.L() + 1
	lo, hi := 0.0, 0.0
	beta := p.Beta
	var idle float64
	var prefix int64 // Σ_{l<i}|x_l|
	caps := make([]int64, n)
	for i := 0; i < n; i++ {
		caps[i] = prefix
		prefix += p.X[i]
	}
	step := func(d, c int64, u float64) bool {
		fd, fc := float64(d), float64(c)
		if fd > fc {
			return false
		}
		switch {
		case hi < fd:
			w := (fd - hi) / beta
			idle += w
			lo, hi = math.Max(0, lo-beta*w), fd
		case lo > fc:
			w := (lo - fc) / beta
			idle += w
			lo, hi = fc, hi+beta*w
		}
		lo, hi = math.Max(lo, fd), math.Min(hi, fc)
		lo, hi = math.Max(fd, lo-beta*u), math.Min(fc, hi+beta*u)
		return true
	}
	for i := 0; i < n; i++ {
		if !step(max(0, p.MemF(i)-p.MGPU), caps[i]+p.X[i], p.UF[i]) {
			return math.Inf(1)
		}
	}
	for i := n - 1; i >= 0; i-- {
		if !step(max(0, p.MemB(i)-p.MGPU), caps[i], p.UB[i]) {
			return math.Inf(1)
		}
	}
	return p.Compute() + idle
}
