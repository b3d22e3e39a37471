// Package pipemilp holds the MILPs of pipelined model parallelism (SPEC §7, 003's ILP): the
// contiguous model (Contiguous), exact over contiguous allocations under the named schedule
// when every part stores everything and a relaxation otherwise, and the allocation model
// (Allocation), a relaxation over every allocation — contiguous or not, several intervals per
// GPU — of the period or of the makespan. Both are written in units chosen from the data
// (milp.ChooseUnits), their big-Ms are a stage's own overheads, not the memory, and every
// solution is turned into a plan (schedule.Pipeline) and replayed by verify/pipeline before it
// is returned; every bound says what certifies it and its scope. docs/pipeline.md, "The MILPs",
// gives the formulations.
package pipemilp
