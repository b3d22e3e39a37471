package dp

// SetPofoNoBounds switches the combined DP's incumbent and lower bounds off (for tests that
// check the pruning loses nothing).
func SetPofoNoBounds(off bool) { pofoNoBounds = off }
