// Package model is memsched's algebraic modeling layer: variables, sparse affine expressions,
// ranged rows and an objective, normalized once (terms merged, zeros dropped, ±Inf for open
// sides) so that file writers and solver backends all see the same model. It contains no solver.
package model
