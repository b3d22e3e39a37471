// Package dp holds rotor's dynamic programs for rematerialization on heterogeneous chains
// (004 §4): C_MP over memory-persistent sequences (Thm 4.8, Alg. 3/4) and C_FL over weakly
// persistent sequences with a floating checkpoint (Thm 4.7, Alg. 1/2, re-derived), on a
// memory discretized into slots (§5.2). Every returned sequence is replayed by verify.Remat.
package dp
