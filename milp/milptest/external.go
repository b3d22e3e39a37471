package milptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// External solvers that read memsched's .lp and .mps files independently of its own readers:
// CBC (coinor-cbc) and GLPK's glpsol (glpk-utils), installed by `make setup`.
var (
	cbcObjective    = regexp.MustCompile(`(?:Objective value:|Optimal - objective value)\s+(\S+)`)
	glpsolObjective = regexp.MustCompile(`Objective:\s+\S+ = (\S+)`)
)

// SkipWithoutExternal skips t when solver ("cbc" or "glpsol") is not installed.
func SkipWithoutExternal(t testing.TB, solver string) {
	t.Helper()
	if _, err := exec.LookPath(solver); err != nil {
		t.Skipf("%s is not installed (make setup installs coinor-cbc and glpk-utils): %v", solver, err)
	}
}

// RunExternal solves the model file at path (.lp or free .mps) with solver, "cbc" or "glpsol",
// and returns the optimal objective it prints; ok is false when it reports no optimum. maximize
// says the model maximizes: both solvers ignore the OBJSENSE section of free MPS, so it is
// passed as a flag (and the section stripped for glpsol, which rejects it). cbcArgs go to cbc
// before it solves (e.g. "-ratio", "1e-9"). A solver that fails to run fails t.
func RunExternal(t testing.TB, solver, path string, maximize bool, cbcArgs ...string) (obj float64, ok bool) {
	t.Helper()
	mps := strings.HasSuffix(path, ".mps")
	var out []byte
	var re *regexp.Regexp
	switch solver {
	case "cbc":
		args := []string{path}
		if maximize && mps {
			args = append(args, "-max")
		}
		args = append(append(args, cbcArgs...), "-solve", "-quit")
		var err error
		if out, err = exec.Command("cbc", args...).CombinedOutput(); err != nil {
			t.Fatalf("cbc %v: %v\n%s", args, err, out)
		}
		if !strings.Contains(string(out), "Optimal") {
			return 0, false
		}
		re = cbcObjective
	case "glpsol":
		dir := t.TempDir()
		args := []string{"--lp", path}
		if mps {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			stripped := filepath.Join(dir, "nosense.mps")
			if err := os.WriteFile(stripped, []byte(strings.Replace(string(data), "OBJSENSE\n    MAX\n", "", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			args = []string{"--freemps", stripped}
			if maximize {
				args = append(args, "--max")
			}
		}
		report := filepath.Join(dir, "out.txt")
		if msg, err := exec.Command("glpsol", append(args, "-o", report)...).CombinedOutput(); err != nil {
			t.Fatalf("glpsol %v: %v\n%s", args, err, msg)
		}
		var err error
		if out, err = os.ReadFile(report); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "OPTIMAL") {
			return 0, false
		}
		re = glpsolObjective
	default:
		panic("milptest: unknown external solver " + solver)
	}
	m := re.FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s reported an optimum without an objective:\n%s", solver, out)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("%s: objective %q: %v", solver, m[1], err)
	}
	return v, true
}
