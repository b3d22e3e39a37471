// Package highs is memsched's HiGHS backend, through github.com/lanl/highs v1.0.0 (the binding
// the project's design names) on HiGHS 1.15: the model is built, options are set and infos are
// read by name, and files are read and written, with lanl/highs's RawModel; every HiGHS model
// status is mapped to a milp.Status; native memory is freed deterministically (Close).
//
// Two pieces sit beside lanl/highs, each the smallest that works. internal/highsconst defines
// the HiGHS constants lanl/highs declares extern but HiGHS 1.15 defines static, without which
// nothing importing lanl/highs links. handle.go makes the C calls lanl/highs lacks, on the
// native instance of its RawModel (held in an unexported field, reached by name with reflect):
// the interrupt callback that makes a cancelled context stop the solve, Highs_run itself
// (RawModel.Solve drops all results when HiGHS returns a warning, as on a time limit, and
// panics on a model without rows), the model status (lanl/highs knows 16 of HiGHS 1.15's 18),
// the solution and dual arrays, rows without entries, and reading a model back after a file
// was read. Each is commented with its reason.
//
// The implementation is compiled only with the build tag "highs" (make sets it, with
// PKG_CONFIG_PATH pointing at the HiGHS that scripts/setup.sh installs). Without the tag, New
// returns an error saying so, and the package registers nothing.
package highs
