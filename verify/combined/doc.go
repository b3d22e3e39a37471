// Package combined checks schedules of rematerialization and activation offloading together
// (003's POFO, SPEC §6), independently of the programs that build them:
//
//   - Fluid evaluates a plan of the combined class (top-level segments, which inputs are
//     offloaded, each segment's persistent backward sequence) in the fluid model of SPEC §6,
//     the model the dynamic program optimizes, in exact rational arithmetic;
//   - Check validates an executable schedule (a 004 compute stream and whole-tensor offloads
//     and prefetches on one half-duplex link, synchronized by explicit dependencies) under
//     strict timing — a tensor leaves the GPU only when its offload and its readers have
//     ended, a prefetch reserves the whole tensor when it starts — replaying time exactly and
//     memory event by event, and names the first violation.
//
// For the same decisions the fluid makespan is at most the strict one (bytes leave
// progressively and arrive as late as possible in the fluid model), so the fluid optimum of
// the class bounds the strict optimum of the class from below — and nothing outside it.
package combined
