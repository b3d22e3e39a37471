//go:build highs

package cli

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMETour runs README.md's tour as printed, so that it cannot rot: README.md is the
// source, this test only reads it.
//
// How it reads README.md. In every fenced block (```text or ```sh), a line "$ COMMAND" is run
// with bash in one scratch directory shared by the whole tour (files made by one command are
// there for the next; bin/memsched is the binary built from this tree with the test's own
// build tags). The lines after it, up to the next "$ " line or the end of the block, are what
// it prints, stdout and stderr together as a terminal shows them, and they must match the
// output line by line:
//   - a line "..." (alone) stands for any number of lines, zero included; without one at the
//     start (end) the output must begin (end) with the lines shown — every line a command
//     prints is shown or explicitly elided;
//   - "…" inside a line stands for any text (a wall time: "75 points in … s");
//   - runs of spaces are one space (tables may be re-aligned), trailing spaces are ignored;
//   - numbers are compared as numbers, equal within 1e-9 absolute or relative (a solver's gap
//     of 4.05e-16 against 1.35e-16 passes, 205.60 ms against 205.61 ms does not).
//
// A command must exit 0 unless its line ends in a comment "# exit status N". The times with
// decimals that the tour's prose quotes ("347.01 ms") must be printed by one of its commands
// (tourProseTimes), unless proseElsewhere says which other run gives them. Lines of ```sh
// blocks that start with "bin/memsched" but not "$ " (the command list of "What it does",
// with placeholders like FILE and a|b) are not run; their subcommands and --flags must exist.
//
// To add a command to the README tour: write it as "$ bin/memsched ..." in a ```text block,
// then paste what it prints below it (mark what you leave out with "..." and variable text
// with "…"), and run this test (make test runs it; alone: go test -tags "highs lpsolve"
// ./internal/cli -run TestREADMETour). The whole tour takes about 5 s once built.
func TestREADMETour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the README tour")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	steps, listed := parseTour(string(readme))
	require.GreaterOrEqual(t, len(steps), 10, "the tour's $ lines")

	root := NewRootCmd(&IO{})
	for _, l := range listed {
		assert.NoError(t, checkCommandLine(root, strings.Fields(l.text)[1:]), "README.md:%d: %s", l.line, l.text)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "memsched")
	build := exec.Command("go", "build", "-tags", strings.Join(buildTags(), " "), "-o", bin, "github.com/memsched/memsched/cmd/memsched")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	start := time.Now()
	var printed strings.Builder // every output of the tour, for the prose's numbers
	for _, s := range steps {
		cmd := exec.Command("bash", "-c", s.command)
		cmd.Dir = dir
		got, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err, "README.md:%d: %s", s.line, s.command)
		}
		printed.Write(got)
		where := fmt.Sprintf("README.md:%d: $ %s", s.line, s.command)
		if !assert.Equal(t, s.exit, code, "%s\n%s", where, got) {
			continue
		}
		if msg := matchOutput(s.want, strings.Split(strings.TrimRight(string(got), "\n"), "\n")); msg != "" {
			t.Errorf("%s\n%s\n--- printed:\n%s", where, msg, got)
		}
	}
	t.Logf("%d commands of the README tour in %.1f s", len(steps), time.Since(start).Seconds())
	all := strings.Join(strings.Fields(printed.String()), " ")
	for _, q := range tourProseTimes(string(readme)) {
		if why, ok := proseElsewhere[q.text]; ok {
			t.Logf("README.md:%d: %s not checked: %s", q.line, q.text, why)
			continue
		}
		assert.Contains(t, all, q.text, "README.md:%d: the tour's prose quotes %s, which no tour command prints (issue 29: the prose had gone stale)", q.line, q.text)
	}
}

// proseElsewhere are the times the tour's prose quotes from a run that is not one of its
// commands, with where they come from.
var proseElsewhere = map[string]string{
	"9267.63 ms": "make demo's certify of the 36-block GPT-2 on 16 GiB with --weights-resident (scripts/demo.sh), tens of seconds",
}

// proseTime is a time the tour's prose quotes, e.g. "347.01 ms".
type proseTime struct {
	line int
	text string
}

var proseTimeRE = regexp.MustCompile(`(^|[^0-9.])([0-9]+\.[0-9]+ ms)`)

// tourProseTimes returns the times with decimals ("347.01 ms", not "about 199 ms") that the
// prose of README.md's tour quotes, outside its fenced blocks: each must be printed by one of
// the tour's commands (TestREADMETour), so that a changed result cannot leave the prose behind.
func tourProseTimes(readme string) []proseTime {
	var out []proseTime
	inTour, inBlock := false, false
	for n, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			inTour = strings.HasPrefix(line, "## A 5-minute tour")
			continue
		case strings.HasPrefix(line, "```"):
			inBlock = !inBlock
			continue
		}
		if !inTour || inBlock {
			continue
		}
		for _, m := range proseTimeRE.FindAllStringSubmatch(line, -1) {
			out = append(out, proseTime{n + 1, m[2]})
		}
	}
	return out
}

// TestTourProseTimes: the prose's times are found (the README's tour quotes several).
func TestTourProseTimes(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var texts []string
	for _, q := range tourProseTimes(string(readme)) {
		texts = append(texts, q.text)
	}
	assert.Contains(t, texts, "347.01 ms")
	assert.NotContains(t, texts, "47.42 ms", "times inside the fenced blocks are the outputs' own")
	assert.Equal(t, []proseTime{{3, "1.50 ms"}}, tourProseTimes("# x\n## A 5-minute tour\nabout 199 ms, then 1.50 ms\n```text\n2.00 ms\n```\n## Next\n3.00 ms\n"))
}

// tourStep is one "$ " line of the README and the lines shown below it.
type tourStep struct {
	line    int
	command string
	exit    int
	want    []string
}

// listedLine is a line of the README's command list: checked, not run.
type listedLine struct {
	line int
	text string
}

var exitComment = regexp.MustCompile(`#\s*exit status (\d+)`)

// parseTour reads the fenced blocks of a README.
func parseTour(readme string) (steps []tourStep, listed []listedLine) {
	sc := bufio.NewScanner(strings.NewReader(readme))
	inBlock, lang := false, ""
	var cur *tourStep
	flush := func() {
		if cur != nil {
			steps = append(steps, *cur)
			cur = nil
		}
	}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			flush()
			inBlock, lang = !inBlock, strings.TrimPrefix(line, "```")
			continue
		}
		if !inBlock || (lang != "text" && lang != "sh") {
			continue
		}
		switch {
		case strings.HasPrefix(line, "$ "):
			flush()
			cur = &tourStep{line: n, command: strings.TrimPrefix(line, "$ ")}
			if m := exitComment.FindStringSubmatch(line); m != nil {
				cur.exit, _ = strconv.Atoi(m[1])
			}
		case cur != nil:
			cur.want = append(cur.want, line)
		case lang == "sh" && strings.HasPrefix(line, "bin/memsched "):
			text, _, _ := strings.Cut(line, "#")
			listed = append(listed, listedLine{n, strings.TrimSpace(text)})
		}
	}
	flush()
	for i := range steps { // blank lines that end a block are the block's, not the output's
		w := steps[i].want
		for len(w) > 0 && strings.TrimSpace(w[len(w)-1]) == "" {
			w = w[:len(w)-1]
		}
		steps[i].want = w
	}
	return steps, listed
}

// matchOutput matches the printed lines against the lines shown, "..." lines eliding any
// number of lines; it returns "" or what does not match.
func matchOutput(want, got []string) string {
	if len(got) == 1 && got[0] == "" {
		got = nil
	}
	segs := [][]string{{}}
	for _, w := range want {
		if t := strings.TrimSpace(w); t == "..." || t == "…" {
			segs = append(segs, []string{})
			continue
		}
		segs[len(segs)-1] = append(segs[len(segs)-1], w)
	}
	first, last := segs[0], segs[len(segs)-1]
	if len(segs) == 1 {
		if len(got) != len(first) {
			return fmt.Sprintf("printed %d lines, shown %d (mark what is left out with \"...\")", len(got), len(first))
		}
		return diffAt(first, got, 0)
	}
	end := len(got) - len(last)
	if len(first) > end {
		return fmt.Sprintf("printed %d lines, fewer than the %d shown", len(got), len(first)+len(last))
	}
	if msg := diffAt(first, got, 0); msg != "" {
		return "the output does not begin as shown: " + msg
	}
	if msg := diffAt(last, got, end); msg != "" {
		return "the output does not end as shown: " + msg
	}
	pos := len(first)
	for _, s := range segs[1 : len(segs)-1] {
		at := pos
		for ; at+len(s) <= end && !segmentAt(s, got, at); at++ {
		}
		if at+len(s) > end {
			return "not printed, or not in this order:\n" + strings.Join(s, "\n")
		}
		pos = at + len(s)
	}
	return ""
}

// diffAt says where seg differs from got[at:], or "" when every line matches.
func diffAt(seg, got []string, at int) string {
	for k, w := range seg {
		if !lineMatches(w, got[at+k]) {
			return fmt.Sprintf("printed line %d is\n\t%s\nshown as\n\t%s", at+k+1, got[at+k], w)
		}
	}
	return ""
}

func segmentAt(seg, got []string, at int) bool {
	for k, w := range seg {
		if !lineMatches(w, got[at+k]) {
			return false
		}
	}
	return true
}

var tourNumber = regexp.MustCompile(`^\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`)

// lineMatches compares one printed line with one shown: spaces collapsed, "…" any text, numbers
// as numbers within 1e-9.
func lineMatches(want, got string) bool {
	w := strings.TrimSpace(want)
	var re strings.Builder
	var nums []float64
	re.WriteString(`^`)
	for w != "" {
		if loc := tourNumber.FindStringIndex(w); loc != nil {
			x, _ := strconv.ParseFloat(w[:loc[1]], 64)
			nums = append(nums, x)
			re.WriteString(`(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)`)
			w = w[loc[1]:]
			continue
		}
		switch r, size := utf8.DecodeRuneInString(w); {
		case r == ' ' || r == '\t':
			re.WriteString(`\s+`)
			w = strings.TrimLeft(w, " \t")
		case r == '…':
			re.WriteString(`.*?`)
			w = w[size:]
		default:
			re.WriteString(regexp.QuoteMeta(w[:size]))
			w = w[size:]
		}
	}
	re.WriteString(`$`)
	m := regexp.MustCompile(re.String()).FindStringSubmatch(strings.TrimSpace(got))
	if m == nil {
		return false
	}
	for i, x := range nums {
		y, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil || math.Abs(x-y) > 1e-9*math.Max(1, math.Abs(x)) {
			return false
		}
	}
	return true
}

// checkCommandLine resolves words (after "bin/memsched") to a command and checks that every
// --flag of the line exists on it; a word "a|b|c" of subcommands is each checked.
func checkCommandLine(root *cobra.Command, words []string) error {
	cmd := root
	i := 0
	for ; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") {
			break
		}
		if !cmd.HasSubCommands() {
			break // an argument (a file, a family)
		}
		var next *cobra.Command
		for _, alt := range strings.Split(w, "|") {
			sub := findSub(cmd, alt)
			if sub == nil {
				return fmt.Errorf("memsched %s has no subcommand %q", cmd.Name(), alt)
			}
			if next == nil {
				next = sub
			}
		}
		cmd = next
	}
	if cmd == root {
		return fmt.Errorf("no command in %q", strings.Join(words, " "))
	}
	for _, w := range words[i:] {
		for _, f := range regexp.MustCompile(`--[a-z][a-z0-9-]*`).FindAllString(w, -1) {
			if cmd.Flags().Lookup(f[2:]) == nil && cmd.InheritedFlags().Lookup(f[2:]) == nil {
				return fmt.Errorf("memsched %s has no flag %s", cmd.Name(), f)
			}
		}
	}
	return nil
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// buildTags returns the build tags this test binary was built with (make test: highs lpsolve),
// so that the binary the tour runs has the same solvers.
func buildTags() []string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				return strings.Split(s.Value, ",")
			}
		}
	}
	return []string{"highs"}
}

// TestTourMatching: the rules TestREADMETour compares by.
func TestTourMatching(t *testing.T) {
	assert.True(t, lineMatches("gap 4.05e-16 (exact)", "gap 1.35e-16 (exact)"), "within 1e-9")
	assert.False(t, lineMatches("205.60 ms", "205.61 ms"))
	assert.True(t, lineMatches("a    b  12", "a b 12.000"), "spaces collapse, numbers by value")
	assert.True(t, lineMatches("75 points in … s; wrote x", "75 points in 0.99 s; wrote x"))
	assert.False(t, lineMatches("75 points in … s", "76 points in 0.99 s"))
	assert.True(t, lineMatches("Fall^1 r101.json L=38", "Fall^1 r101.json L=38"))
	assert.False(t, lineMatches("r101.json", "r1010json"), "a dot is a dot")

	got := []string{"h1", "h2", "", "a", "b", "c", "end"}
	assert.Empty(t, matchOutput(got, got))
	assert.Empty(t, matchOutput([]string{"h1", "...", "b", "...", "end"}, got))
	assert.Empty(t, matchOutput([]string{"...", "c", "end"}, got))
	assert.Empty(t, matchOutput([]string{"h1", "h2", "..."}, got))
	assert.NotEmpty(t, matchOutput([]string{"h1", "h2"}, got), "an elision must be marked")
	assert.NotEmpty(t, matchOutput([]string{"h2", "...", "end"}, got), "the output starts with the first line shown")
	assert.NotEmpty(t, matchOutput([]string{"h1", "...", "c"}, got), "and ends with the last")
	assert.NotEmpty(t, matchOutput([]string{"h1", "...", "c", "...", "b", "...", "end"}, got), "in order")
	assert.NotEmpty(t, matchOutput(nil, []string{"x"}), "a command shown without output prints none")
	assert.Empty(t, matchOutput(nil, []string{""}))

	steps, listed := parseTour("x\n```text\n$ a 1 # exit status 1\nout\n\n$ b\n```\n```sh\nbin/memsched remat --mem SIZE  # c\nmake x\n```\n")
	require.Len(t, steps, 2)
	assert.Equal(t, tourStep{line: 3, command: "a 1 # exit status 1", exit: 1, want: []string{"out"}}, steps[0])
	assert.Equal(t, []listedLine{{9, "bin/memsched remat --mem SIZE"}}, listed)
	root := NewRootCmd(&IO{})
	assert.NoError(t, checkCommandLine(root, []string{"gen", "random|toy", "-o", "x"}))
	assert.Error(t, checkCommandLine(root, []string{"remat", "--memory", "1GiB"}))
	assert.Error(t, checkCommandLine(root, []string{"gen", "zoo|bogus"}))
}
