// Package pipeline is the independent validator of pipelined model parallelism (SPEC §7): it
// replays a plan (schedule.Pipeline: the chain cut into parts on GPUs, each part's 004
// sequence when it recomputes, each GPU's order of actions) on an instance
// (instances/pipeline.Problem) and gives the makespan of one iteration, the steady-state
// period, each GPU's peak memory, and the first violation.
//
// The replay follows SPEC §7 op by op and owes nothing to the planners: each part's sequence
// is replayed under §1's rules for one micro-batch (the same for all), each GPU's memory is
// the stored state of its micro-batches in its order of actions plus the running operation's
// own memory plus Σ w, and the times come from a list simulation in which every action starts
// as soon as its input has arrived and its GPU is free, each link carrying one transfer at a
// time in the order its sender produced them. Contiguous and non-contiguous allocations (a GPU
// with several parts, explicit per-GPU action lists as PyTorch's _PipelineScheduleRuntime
// takes them) go through the same replay.
//
// Exhaustive is the referee of the planners on tiny chains: every contiguous allocation on at
// most P GPUs times every choice of each GPU's sequence in rotor's persistent class, replayed.
package pipeline
