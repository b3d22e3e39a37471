// Package pipeline is the instance of pipelined model parallelism (SPEC §7, after 003's
// PipeDream/MadPipe discussion): a chain of §1 with each stage's persistent bytes w_ℓ, P
// identical GPUs of M bytes, a link of bandwidth β in each direction between consecutive GPUs,
// the batch cut into m micro-batches, and the order each GPU runs its operations in (GPipe or
// 1F1B, as torch.distributed.pipelining orders them).
//
// A plan (schedule.Pipeline) cuts the chain into parts on GPUs. In a contiguous allocation
// GPU k = 0..S−1 holds stages s_k..e_k and the last GPU also runs the loss stage L+1. Micro-
// batch μ's forward F_k(μ) on GPU k runs F_all^{s_k} … F_all^{e'} (e' = L+1 on the last GPU,
// else e_k) and needs a^{s_k−1}(μ); its backward B_k(μ) runs B^{e'} … B^{s_k} and needs
// δ^{e_k}(μ). After F_k(μ), a^{e_k}(μ) goes to GPU k+1 (ω_a^{e_k}/β on the forward link);
// after B_{k+1}(μ), δ^{e_k}(μ) comes back (ω_δ^{e_k}/β). A link carries one transfer at a
// time, in the order its sender produced them. Each GPU runs its actions in a fixed order
// (Actions), each as soon as its input has arrived and the GPU is free.
//
// Memory of a GPU: Σ w over its stages, always, plus §1's rules per micro-batch:
// a^{s_k−1}(μ) from the start of F_k(μ); during F_all^ℓ, ω_ā^ℓ + o_f^ℓ, then ā^ℓ stays;
// δ^{e'}(μ) from the start of B_k(μ); during B^ℓ, ω_δ^{ℓ−1} + o_b^ℓ; after B^ℓ, δ^ℓ and ā^ℓ
// go (and a^{s_k−1} after B^{s_k}); δ^{s_k−1} goes at the end of B_k(μ). With a 004 sequence
// on the part (rematerialization inside a stage) the same rules apply op by op: its forward
// phase is F_k(μ), its backward phase B_k(μ), and in between a micro-batch holds what the
// forward phase stored. The peak depends on the order of operations only: with n micro-
// batches in flight it is Σw + (n−1)·held + the sequence's own peak (PartCosts).
//
// This package holds the data (Problem), its validation, the named orders (Actions) and the
// closed forms of a part's costs; verify/pipeline replays a plan op by op, dp/pipeline plans.
package pipeline
