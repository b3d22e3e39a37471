// Package checkmate builds and solves Checkmate's rematerialization MILP (Jain et al., MLSys
// 2020, §4; SPEC §4) on a computation graph (instances.Graph), sparse and lower-triangular.
//
// Nodes i = 0..n−1 in the graph's topological order, stages t = 0..n−1. Variables, only where
// the frontier allows them (i ≤ t for R, i < t for S):
//
//	R[t,i] ∈ {0,1}   node i is computed in stage t; R[t,t] = 1 (the frontier)
//	S[t,i] ∈ {0,1}   the output of i is kept from stage t−1 into stage t
//	FREE[t,i,k] ∈ {0,1}  for k < t and i ∈ deps(k) ∪ {k}: i's output is freed right after k
//	U[t,k] ∈ [0, M]  memory right after computing k in stage t (before k's frees)
//
// Rows (memory in units u.Memory, time in u.Time, milp.ChooseUnits):
//
//	dependencies  R[t,k] ≤ R[t,i] + S[t,i]              edge (i,k), k ≤ t
//	persistence   S[t+1,i] ≤ S[t,i] + R[t,i]            i ≤ t
//	no duplicate  R[t,i] + S[t,i] ≤ 1                   i < t
//	frees         FREE[t,i,k] ≤ R[t,k],  FREE[t,i,k] + S[t+1,i] ≤ 1,
//	              FREE[t,i,k] + R[t,j] ≤ 1  for every user j of i with k < j ≤ t
//	memory        U[t,0] = F + Σ_{i<t} M_i S[t,i] + M_0 R[t,0]
//	              U[t,k] = U[t,k−1] − Σ_{i ∈ deps(k−1) ∪ {k−1}} M_i FREE[t,i,k−1] + M_k R[t,k]
//	budget        U[t,k] ≤ M,  U[t,k] + T_k R[t,k] ≤ M (T_k: transient memory, when > 0)
//	minimise      Σ_t Σ_{i ≤ t} C_i R[t,i]
//
// with F the graph's fixed memory and M the budget. The products FREE = R[t,k]·(1 − S[t+1,i])·
// Π_j (1 − R[t,j]) are bounded from above only, one row per factor (tighter than Checkmate's
// aggregated "hazard count" row); freeing lowers memory, so an optimum frees whatever it may,
// and a point that frees less only over-counts memory. The schedule read from (R, S) is replayed
// by verify/graphsim, whose rules (free right after the last use in the stage unless kept) free
// at least as much as any feasible FREE, so it always fits.
//
// Size: n(n+1)/2 R, n(n−1)/2 S, n(n+1)/2 U and Σ_t Σ_{k<t} (|deps(k)|+1) FREE columns; rows are
// dominated by the frees' user rows, O(n·|E|·n) in the worst case, O(n²) on chains and their
// forward+backward graphs (see docs/checkmate.md for measured sizes).
//
// On a chain, Checkmate's graph model (SolveChain) solves the free-delete variant with ā kept
// whole; BuildChain / SolveChainExact is the chain-exact variant: the same staged model with
// 004's phases as stages, F_ck/F_∅/F_all as producers of a^k or ā^k and 004's removals instead
// of frees, whose optimum is the exhaustive oracle's (BuildChain's doc comment), warm-started
// from a dynamic program's sequence (ChainFormulation.Point, milp.Params.Start).
package checkmate
