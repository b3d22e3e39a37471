// Package lpsolve is memsched's lp_solve 5.5 backend, through
// github.com/draffensperger/golp. It is compiled only with the build tag "lpsolve" (make sets
// it, with CGO_CFLAGS=-I/usr/include/lpsolve and the Debian liblpsolve55-dev libraries);
// without the tag New returns an error saying so.
//
// lp_solve is the fallback backend: golp exposes no MIP gap setting and no best-bound query,
// so Params.RelGap is ignored (lp_solve's default gaps apply: 1e-11 absolute, 1e-9 relative)
// and Bound is the objective when the status is Optimal, ±Inf otherwise. Time limits are
// whole seconds (rounded up). Ranged rows become two rows.
//
// Params.NoPresolve is honoured (lp_solve presolves nothing unless asked, and is told so
// explicitly). Params.FeasTol is ignored: golp offers no tolerance setter (set_epsb,
// set_epsint). lp_solve's defaults are already tight — 1e-10 for rounding primal values and
// right-hand sides, 1e-7 for integrality.
package lpsolve
