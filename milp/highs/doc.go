// Package highs is memsched's HiGHS backend: a small cgo binding of the HiGHS 1.15 C API
// (highs_c_api.h) that passes models as CSR arrays directly, maps every HiGHS model status to a
// milp.Status, and frees native memory deterministically.
//
// The implementation is compiled only with the build tag "highs" (make sets it, with
// PKG_CONFIG_PATH pointing at the HiGHS that scripts/setup.sh installs). Without the tag, New
// returns an error saying so, and the package registers nothing.
//
// Why not github.com/lanl/highs: v1.0.0, the only version the module proxy serves, declares
// HiGHS's constants as `extern const HighsInt kHighs...`, but HiGHS 1.15's C header defines
// them `static const`, so a program using it fails to link (undefined kHighsModelStatusOptimal
// and friends). It also returns a non-nil zero-valued error on success and maps newer model
// statuses to "unknown". This binding uses only the functions memsched needs.
package highs
