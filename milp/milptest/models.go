package milptest

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memsched/memsched/milp"
)

// ModelFile is one file of the repository's testdata/models (see testdata/README.md): public
// and hand-written LP/MPS files, each with what memsched, the HiGHS binary and CBC make of it.
type ModelFile struct {
	// Name is the file's path under testdata/models; Path its absolute path.
	Name, Path string
	// Memsched is what memsched's readers and backends must make of the file; HiGHS and CBC
	// what those solvers report (HiGHS 1.15.1, CBC 2.10.8).
	Memsched, HiGHS, CBC Outcome
	// Covers says what construct the file is there for.
	Covers string
}

// Outcome is what a solver makes of a file: Status "optimal" (with Objective), "infeasible",
// "unbounded", "refused" (memsched: a ParseError containing Text) or "read-error" (HiGHS or CBC
// refuse the file, or crash on it).
type Outcome struct {
	Status    string
	Objective float64 // NaN unless Status is optimal and a value is listed
	Text      string
}

func (o Outcome) String() string {
	switch {
	case o.Text != "":
		return o.Status + " " + o.Text
	case !math.IsNaN(o.Objective):
		return fmt.Sprintf("%s %.10g", o.Status, o.Objective)
	}
	return o.Status
}

// Matches says whether status and objective are this outcome, the objective within 1e-6
// relative.
func (o Outcome) Matches(status string, objective float64) bool {
	if status != o.Status {
		return false
	}
	return math.IsNaN(o.Objective) || math.Abs(objective-o.Objective) <= 1e-6*math.Max(1, math.Abs(o.Objective))
}

// Check returns "" when res (from milp.Solve) is the outcome, else what differs.
func (o Outcome) Check(res *milp.Result) string {
	if res.Refused != "" {
		return "refused answer: " + res.Refused
	}
	obj := math.NaN()
	if res.HasSolution {
		obj = res.Objective
	}
	if !o.Matches(res.Status.String(), obj) {
		return fmt.Sprintf("got %s %.10g, want %v", res.Status, obj, o)
	}
	return ""
}

// ModelFiles returns the files of testdata/models listed in its expected.tsv.
func ModelFiles(t testing.TB) []ModelFile {
	t.Helper()
	dir := filepath.Join(moduleRoot(t), "testdata", "models")
	f, err := os.Open(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var files []ModelFile
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		col := strings.Split(line, "\t")
		if len(col) != 5 {
			t.Fatalf("expected.tsv:%d: %d columns, want 5", ln, len(col))
		}
		mf := ModelFile{Name: col[0], Path: filepath.Join(dir, col[0]), Covers: col[4]}
		for k, o := range []*Outcome{&mf.Memsched, &mf.HiGHS, &mf.CBC} {
			if *o, err = parseOutcome(col[1+k]); err != nil {
				t.Fatalf("expected.tsv:%d: %v", ln, err)
			}
		}
		files = append(files, mf)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return files
}

func parseOutcome(s string) (Outcome, error) {
	status, rest, _ := strings.Cut(s, " ")
	o := Outcome{Status: status, Objective: math.NaN()}
	switch status {
	case "refused":
		o.Text = rest
	case "optimal":
		if rest != "" {
			x, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				return o, fmt.Errorf("objective %q: %v", rest, err)
			}
			o.Objective = x
		}
	case "infeasible", "unbounded", "read-error":
	default:
		return o, fmt.Errorf("unknown outcome %q", s)
	}
	return o, nil
}

// Plain returns the path of mf's file uncompressed: its own, or a copy in a temporary folder of
// t for a .gz file (solvers built without zlib cannot read those).
func (mf ModelFile) Plain(t testing.TB) string {
	t.Helper()
	if !strings.HasSuffix(mf.Path, ".gz") {
		return mf.Path
	}
	in, err := os.Open(mf.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	z, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(mf.Path), ".gz"))
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, z); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Maximizes says whether mf's file states a maximization in an MPS OBJSENSE section, which
// cbc ignores (RunCBC passes it as -max).
func (mf ModelFile) Maximizes(t testing.TB) bool {
	t.Helper()
	if !strings.Contains(mf.Name, ".mps") {
		return false
	}
	data, err := os.ReadFile(mf.Plain(t))
	if err != nil {
		t.Fatal(err)
	}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || line[0] == '*' {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			section = strings.ToUpper(f[0])
			if section == "OBJSENSE" && len(f) > 1 {
				return strings.HasPrefix(strings.ToUpper(f[1]), "MAX")
			}
			if section == "ROWS" {
				return false
			}
		} else if section == "OBJSENSE" {
			return strings.HasPrefix(strings.ToUpper(f[0]), "MAX")
		}
	}
	return false
}

// moduleRoot is the folder of the go.mod above the test's working directory.
func moduleRoot(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("milptest: no go.mod above the working directory")
		}
		dir = parent
	}
}
