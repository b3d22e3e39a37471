// Package pipepack plans non-contiguous allocations of pipelined model parallelism (SPEC §7,
// 003's ILP and MadPipe): the chain cut into consecutive parts, several of which may share a
// GPU (virtual stages), and runs them.
//
//   - Alloc turns a stage-to-GPU assignment into a plan (parts = maximal runs of stages on one
//     GPU), Period gives an allocation's steady-state period — the largest per-micro-batch
//     load of a GPU, Σ(u_f+u_b) over its stages, or of a link, the transfers of the cuts that
//     share it in one direction — and MemoryBound what each GPU needs at most when it runs.
//   - Actions gives the per-rank action lists a non-contiguous plan runs with (PyTorch's
//     _PipelineScheduleRuntime takes them): under 1F1B each part keeps its own 1F1B order of a
//     pipeline of S virtual stages (warm-up min(m, S−k) for the part at chain position k) and
//     a GPU runs, among its parts' next actions, the one that can start first ("merged
//     1F1B"); under GPipe the named looped breadth-first order (ScheduleLoopedBFS). Modulo
//     gives the 1-periodic order of period T that reaches Period as m grows.
//   - Pack is a dynamic program over the chain from its end, in MadPipe's spirit (research
//     §1.8): each step places the next part [s, b] on a GPU other than the previous part's,
//     with the part's in-flight count n (its 1F1B position from the end, or m under GPipe)
//     charged against that GPU's memory, and minimizes the period. Its states are the GPUs'
//     (load, memory) up to relabeling; a depth-first search over them with a transposition
//     table and bounds is exact when it finishes (Result.Optimal).
//
// Every plan returned is replayed by verify/pipeline with the problem's m.
package pipepack
