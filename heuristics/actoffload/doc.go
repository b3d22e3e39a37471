// Package actoffload builds activation-offloading schedules for 001's Problem 1 (SPEC §2):
//   - NoWait, the no-wait scheduler of 001 Prop. 1: given which activations leave and the order
//     of the transfers on the link, every operation and transfer starts as early as possible;
//   - Greedy, 001 §4.2 (Thm 2's eager set rounded up to whole activations);
//   - VDNN, 001 §6.1 (offload the activations whose u_F/|x| is above a threshold, or every
//     other one of them; best over all thresholds);
//   - Exact, a branch and bound over offload sets and link orders for small instances.
//
// Every schedule is validated by verify/timed before it is returned.
package actoffload
