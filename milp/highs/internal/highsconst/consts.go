//go:build highs

package highsconst

/*
#cgo pkg-config: highs
#include "util/HighsInt.h"

extern const int memsched_highsconst_count;
const char* memsched_highsconst_name(int i);
HighsInt memsched_highsconst_defined(int i);
HighsInt memsched_highsconst_header(int i);
*/
import "C"

import "fmt"

// Mismatches compares every constant defined in externs_gen.c with the installed header's value
// and describes each difference; it returns nil when they all agree (the header was not changed
// since gen.go ran).
func Mismatches() []string {
	n := int(C.memsched_highsconst_count)
	var out []string
	for i := 0; i < n; i++ {
		def, hdr := int64(C.memsched_highsconst_defined(C.int(i))), int64(C.memsched_highsconst_header(C.int(i)))
		if def != hdr {
			out = append(out, fmt.Sprintf("%s: defined %d, header %d", C.GoString(C.memsched_highsconst_name(C.int(i))), def, hdr))
		}
	}
	return out
}

// Count is the number of constants defined (those lanl/highs declares extern).
func Count() int { return int(C.memsched_highsconst_count) }
