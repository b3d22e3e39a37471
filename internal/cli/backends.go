package cli

// The solver backends register themselves with package milp. HiGHS and lp_solve are compiled
// in only with the build tags highs and lpsolve (make sets them); without them these packages
// register nothing and `--solver highs` says how to get it.
import (
	_ "github.com/memsched/memsched/milp/highs"
	_ "github.com/memsched/memsched/milp/lpsolve"
	_ "github.com/memsched/memsched/milp/ref"
)
