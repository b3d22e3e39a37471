// Package actoffload holds activation-offloading problems (001, SPEC §2): a chain of forward
// operations F_0..F_L and backward operations B_L..B_0, activations x_0..x_{L+1} that may be
// moved to CPU memory and back over one link of bandwidth β, and a GPU memory M_GPU.
package actoffload
