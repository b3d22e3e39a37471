// Package pipeline holds the baselines of pipelined model parallelism (SPEC §7): how users
// cut a chain into pipeline stages today. Each returns a contiguous allocation (its parts'
// last stages); dp/pipeline.Evaluate completes it into a plan and verify/pipeline replays it.
//
//   - Uniform: equal layer counts, PyTorch's and Megatron's default (torch.distributed.
//     pipelining splits where the user marks it, Megatron gives every stage L/P layers).
//   - Balanced: equal time, the chains-on-chains split of Σ(u_f + u_b), memory aside.
//   - PipeDream: PipeDream's planner (Narayanan et al., SOSP 2019; msr-fiddle/pipedream
//     optimizer_graph_hierarchical.py) on a straight pipeline, with its own memory convention.
package pipeline
