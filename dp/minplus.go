package dp

// minPlusGeneric is the min-plus step of C_MP's fill on one block of budgets:
// out[i] = min(out[i], (pre + a[i]) + b[i]), recording id in arg[i] where the sum is strictly
// smaller (the first candidate reaching the minimum keeps it). The sum is evaluated in that
// order everywhere, so that the vector kernel (minPlus, where the build has one) gives the
// same bits.
func minPlusGeneric(pre float64, a, b, out []float64, arg []int16, id int16) {
	// Re-sliced to one length so the compiler drops the bounds checks of the hot loop.
	b, out, arg = b[:len(a)], out[:len(a)], arg[:len(a)]
	for i, x := range a {
		if v := pre + x + b[i]; v < out[i] {
			out[i] = v
			arg[i] = id
		}
	}
}
