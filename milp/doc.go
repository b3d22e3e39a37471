// Package milp defines the solver interface, statuses and parameters for memsched's MILP
// formulations, and the formulations themselves. Backends live in subpackages: milp/ref (pure
// Go referee for tiny models), milp/highs and milp/lpsolve (cgo, build tags highs and lpsolve).
package milp
