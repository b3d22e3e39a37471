// Package report certifies the strategies of every memory lever against lower bounds.
//
// A user brings one chain, one GPU memory budget and, for the offloading levers, one link
// bandwidth. For each lever (rematerialization, activation offloading, weight offloading)
// Certify runs every applicable strategy, replays each schedule with the independent validator
// of package verify, computes every applicable lower bound within a time budget, and reports
// each strategy's makespan (or period) as a ratio to the best certified lower bound:
//
//	ratio = makespan / max{bound_k} ≥ makespan / OPT,
//
// so a ratio of 1 proves the strategy optimal and any ratio is an upper bound on the true
// distance to the optimum. Each bound says what certifies it: the exhaustive search (an
// optimum), the C_FL dynamic program (optimal by 004 Lemma 4.4, or a relaxation with sizes
// rounded down), a MILP with its status and gap, a safe LP bound, or a plain relaxation (Σu).
//
// Levers are values of the Lever interface (Remat, ActOffload, WeightOffload), so that another
// lever or a new strategy plugs in as one more implementation. The package is pure Go: MILP bounds go through milp.Lookup
// and the milp.Solver interface, so it builds without cgo; backends register themselves in
// the binary that links them.
package report
