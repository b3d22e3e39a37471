package milp

// BytesPerNonzero is the memory a MILP takes per constraint nonzero while memsched builds it
// and HiGHS solves it: 520 B, measured on the weight-offloading MILP of a 300-block GPT-2
// (2.56 million nonzeros; `memsched bound` peaks at 1.31 GB of RSS, of which 180 MB is the Go
// model and the rest HiGHS's copies and presolve). Callers size a model with it before
// building one, to refuse what would not fit (--max-memory).
const BytesPerNonzero = 520

// ModelBytes estimates the memory of solving a model of nonzeros constraint nonzeros.
func ModelBytes(nonzeros int) int64 { return int64(nonzeros) * BytesPerNonzero }
