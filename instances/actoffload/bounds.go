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
	f := FluidPass{Beta: p.Beta}
	var prefix int64 // Σ_{l<i}|x_l|
	caps := make([]int64, n)
	for i := 0; i < n; i++ {
		caps[i] = prefix
		prefix += p.X[i]
	}
	need := p.Needs()
	for i := 0; i < n; i++ {
		if !f.Step(float64(max(0, need[i])), float64(caps[i]+p.X[i]), p.UF[i]) {
			return math.Inf(1)
		}
	}
	for i := n - 1; i >= 0; i-- {
		if !f.Step(float64(max(0, need[2*n-1-i])), float64(caps[i]), p.UB[i]) {
			return math.Inf(1)
		}
	}
	return p.Compute() + f.Idle
}

// FluidPass is Fractional's pass, from any point: [Lo, Hi] are the values C (bytes on the CPU,
// counted as they stream) can have before the next operation, Idle the idling so far, Beta the
// link's rate. Fractional starts it at [0, 0]; a search can start it from a state's C.
type FluidPass struct {
	Lo, Hi, Idle, Beta float64
}

// Step runs one operation of u seconds whose window is C ∈ [d, c]: idle first if [Lo, Hi]
// misses it (the GPU waits the distance over β, the interval widening by β per second), then
// run it (the interval widens by β u within the window). It returns false when the window is
// empty.
func (f *FluidPass) Step(d, c, u float64) bool {
	if d > c {
		return false
	}
	beta := f.Beta
	switch {
	case f.Hi < d:
		w := (d - f.Hi) / beta
		f.Idle += w
		f.Lo, f.Hi = math.Max(0, f.Lo-beta*w), d
	case f.Lo > c:
		w := (f.Lo - c) / beta
		f.Idle += w
		f.Lo, f.Hi = c, f.Hi+beta*w
	}
	lo, hi := math.Max(f.Lo, d), math.Min(f.Hi, c)
	f.Lo, f.Hi = math.Max(d, lo-beta*u), math.Min(c, hi+beta*u)
	return true
}

// FluidWindows returns, for every compute operation in execution order (position k = i for
// F_i, k = 2(L+1)−1−i for B_i), the fluid relaxation's earliest start Head[k] and least time
// Tail[k] from the start of operation k to the end of the iteration; ok is false when even the
// relaxation has no schedule. Every Problem 1 schedule starts operation k at or after Head[k]
// and ends at least Tail[k] after that start, since its C(t) (bytes on the CPU, counted as they
// stream) obeys the windows of Fractional on every prefix and every suffix: Head is
// Fractional's pass stopped before operation k; Tail is the same pass run backwards in time
// from the end (the windows are symmetric in time: |C'| ≤ β, C ∈ [d_k, c_k] during k, and
// C = 0 during B_0, the last operation). Both are certified lower bounds; the MILP of
// milp/actmilp takes them as time windows.
func (p *Problem) FluidWindows() (head, tail []float64, ok bool) {
	n := p.L() + 1
	type op struct {
		d, c int64
		u    float64
	}
	ops := make([]op, 2*n)
	var prefix int64
	caps := make([]int64, n)
	for i := 0; i < n; i++ {
		caps[i] = prefix
		prefix += p.X[i]
	}
	need := p.Needs()
	for i := 0; i < n; i++ {
		ops[i] = op{max(0, need[i]), caps[i] + p.X[i], p.UF[i]}
		ops[2*n-1-i] = op{max(0, need[2*n-1-i]), caps[i], p.UB[i]}
	}
	// pass runs the fluid relaxation over ops in the given order from C = 0 and returns the
	// time at which each operation starts (after the idle it must wait) and the total time.
	pass := func(order []int) (start []float64, total float64, ok bool) {
		lo, hi, t := 0.0, 0.0, 0.0
		beta := p.Beta
		start = make([]float64, len(order))
		for x, k := range order {
			fd, fc := float64(ops[k].d), float64(ops[k].c)
			if fd > fc {
				return nil, 0, false
			}
			switch {
			case hi < fd:
				w := (fd - hi) / beta
				t += w
				lo, hi = math.Max(0, lo-beta*w), fd
			case lo > fc:
				w := (lo - fc) / beta
				t += w
				lo, hi = fc, hi+beta*w
			}
			start[x] = t
			u := ops[k].u
			lo, hi = math.Max(lo, fd), math.Min(hi, fc)
			lo, hi = math.Max(fd, lo-beta*u), math.Min(fc, hi+beta*u)
			t += u
		}
		return start, t, true
	}
	fwd := make([]int, 2*n)
	bwd := make([]int, 2*n)
	for k := range fwd {
		fwd[k], bwd[k] = k, 2*n-1-k
	}
	head, _, ok = pass(fwd)
	if !ok {
		return nil, nil, false
	}
	rstart, _, ok := pass(bwd)
	if !ok {
		return nil, nil, false
	}
	tail = make([]float64, 2*n)
	for x, k := range bwd {
		// In reversed time operation k runs over [rstart[x], rstart[x]+u_k]: its end there is
		// its start in real time, counted from the end of the iteration.
		tail[k] = rstart[x] + ops[k].u
	}
	return head, tail, true
}
