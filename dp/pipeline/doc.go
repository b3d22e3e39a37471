// Package pipeline plans pipelined model parallelism (SPEC §7): the contiguous allocation of
// a chain on at most P GPUs with the least makespan of one iteration under GPipe or 1F1B,
// each GPU storing everything or recomputing inside its part with a persistent 004 sequence
// (rematerialization inside the stages), and certified lower bounds on that makespan.
//
// Plan is a branch and bound over allocations whose every complete allocation is timed by a
// simulation of the event graph, bounded by a fill-and-drain dynamic program and by the
// simulation of a relaxed pipeline; per part, the fastest sequence that fits comes from
// rotor's C_MP tables (package dp) extended with what a micro-batch holds between its forward
// and backward (Rematerialization inside a stage, SPEC §7). Every returned plan is replayed by
// verify/pipeline.
package pipeline
