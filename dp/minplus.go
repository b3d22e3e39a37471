package dp

// minPlusGeneric is the min-plus step of C_MP's fill on one block of budgets:
// out[i] = min(out[i], (pre + a[i]) + b[i]). The sum is evaluated in that order everywhere
// (the vector kernel minPlus, where the build has one, and Persistent.argmin), so that they
// give the same bits.
func minPlusGeneric(pre float64, a, b, out []float64) {
	// Re-sliced to one length so the compiler drops the bounds checks of the hot loop.
	b, out = b[:len(a)], out[:len(a)]
	for i, x := range a {
		if v := pre + x + b[i]; v < out[i] {
			out[i] = v
		}
	}
}
