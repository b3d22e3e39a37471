package milptest

import (
	"errors"
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
	// cbcObjective: a MIP's "Objective value:" (8 decimals), an LP's "Optimal objective"
	// (10 significant digits), else its "Optimal - objective value" (8 significant digits).
	cbcObjective    = regexp.MustCompile(`(?m)(?:Objective value:\s+|^Optimal objective )(\S+)`)
	cbcLPObjective  = regexp.MustCompile(`Optimal - objective value\s+(\S+)`)
	cbcResult       = regexp.MustCompile(`(?m)^Result - (.*)$`)
	cbcReadError    = regexp.MustCompile(`There were -?\d+ errors on input|Current model not valid|### ERROR`)
	glpsolObjective = regexp.MustCompile(`Objective:\s+\S+ = (\S+)`)
)

// RunCBC solves the model file at path (.lp or MPS) with cbc and returns the status it reports
// — "optimal" (with the objective), "infeasible", "unbounded", "read-error" (cbc refused the
// file, or crashed on it) or "other" — so that what CBC makes of a file can be checked, not only its optima.
// maximize passes -max for an MPS file (cbc ignores OBJSENSE); args go to cbc before it solves.
// A cbc that fails to run fails t.
func RunCBC(t testing.TB, path string, maximize bool, args ...string) (status string, obj float64) {
	t.Helper()
	cmd := []string{path}
	if maximize && !strings.HasSuffix(path, ".lp") {
		cmd = append(cmd, "-max")
	}
	cmd = append(append(cmd, args...), "-solve", "-quit")
	out, err := exec.Command("cbc", cmd...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "read-error", 0 // cbc 2.10.8 sometimes segfaults on a file it cannot read
	}
	if err != nil {
		t.Fatalf("cbc %v: %v\n%s", cmd, err, out)
	}
	text := string(out)
	if cbcReadError.MatchString(text) {
		return "read-error", 0
	}
	result := ""
	if m := cbcResult.FindStringSubmatch(text); m != nil {
		result = strings.ToLower(m[1]) // a MIP's, or an LP's that is not optimal
	}
	switch {
	case strings.HasPrefix(result, "optimal"), result == "" && strings.Contains(text, "Optimal - objective value"):
		m := cbcObjective.FindStringSubmatch(text)
		if m == nil {
			m = cbcLPObjective.FindStringSubmatch(text)
		}
		if m == nil {
			t.Fatalf("cbc reported an optimum without an objective:\n%s", text)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("cbc: objective %q: %v", m[1], err)
		}
		return "optimal", v
	case strings.Contains(result, "infeasible"), result == "" && strings.Contains(text, "Primal infeasible"):
		return "infeasible", 0
	case strings.Contains(result, "unbounded"), result == "" && strings.Contains(text, "Dual infeasible"):
		return "unbounded", 0
	}
	return "other", 0
}

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
		status, obj := RunCBC(t, path, maximize, cbcArgs...)
		return obj, status == "optimal"
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
