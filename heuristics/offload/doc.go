// Package offload builds weight-offloading schedules for OFF(L, M_GPU, β) (002, SPEC §3):
//   - L2L, the layer-to-layer baseline (002 §2);
//   - Select, 002 Alg. 1 (greedy choice of which weights leave, with the discount);
//   - Schedule, 002 Alg. 2 (greedy placement in the order B_L … B_1, F_1 … F_L with the
//     cut-point search and best-effort early uploads);
//   - Greedy (Alg. 1 + Alg. 2), Greedy* (no discount), GreedyReserve (Alg. 1 with slack for
//     weights in flight) and Exhaustive (every selection, scheduled by Alg. 2).
//
// Every schedule is validated by verify/periodic before it is returned.
package offload
