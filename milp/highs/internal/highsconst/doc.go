// Package highsconst is the small piece of C that lets memsched use github.com/lanl/highs with
// HiGHS 1.15.
//
// lanl/highs v1.0.0 (the only version the Go module proxy serves) declares 38 HiGHS constants
// in its highs-externs.h as `extern const HighsInt kHighs...`, and its Go files read 34
// constants through cgo (33 of those and kHighsBasisValidityValid), which cgo resolves as
// symbols. HiGHS 1.15's highs_c_api.h defines them all `static const`, so no symbol exists and
// a program that imports lanl/highs fails to link ("undefined reference to
// kHighsModelStatusOptimal"). externs_gen.c includes the installed header with those 39 names
// renamed by #define and then defines each under its real name, with external linkage, equal
// to the header's value. gen.go (go generate) writes it from the installed header and
// lanl/highs's sources; Mismatches compares every definition with the header's own value
// (tested), so a HiGHS upgrade without regenerating fails the tests, not the solves.
// Importing this package for its side effect (blank import, from milp/highs) makes lanl/highs
// link.
//
// The header also has ten non-static constants (kHighsIis*) that every translation unit
// including it defines; lanl/highs's raw-model.go defines them already, so each of our
// translation units renames them to a private name before the include.
//
// The package compiles only with the build tag "highs".
package highsconst

//go:generate go run gen.go
