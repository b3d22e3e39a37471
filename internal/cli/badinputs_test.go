package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badInput is one case of testdata/bad-inputs.txt.
type badInput struct {
	line int
	name string
	args []string
	want string
}

// loadBadInputs reads testdata/bad-inputs.txt: "name | arguments | text", the arguments as
// shell words (single or double quotes; no other shell syntax), # comments, blank lines and
// the Python side's cases (arguments starting with memsched_torch) skipped.
func loadBadInputs(t *testing.T) []badInput {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "bad-inputs.txt"))
	require.NoError(t, err)
	defer f.Close()
	var cases []badInput
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "|")
		require.Len(t, parts, 3, "bad-inputs.txt:%d: want name | arguments | text", n)
		args, err := shellWords(parts[1])
		require.NoError(t, err, "bad-inputs.txt:%d", n)
		if len(args) > 0 && args[0] == "memsched_torch" {
			continue // the Python side's case (python/tests runs it)
		}
		cases = append(cases, badInput{n, strings.TrimSpace(parts[0]), args, strings.TrimSpace(parts[2])})
	}
	require.NoError(t, sc.Err())
	return cases
}

// shellWords splits s into words as a shell would for plain words and '…' or "…" quoting.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, os.ErrInvalid
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// TestBadInputs runs every case of testdata/bad-inputs.txt (the table scripts/bad-inputs.sh
// runs over the built binary) through Main, in a copy of testdata/bad/ with an empty stdin:
// each must exit 2 with nothing on stdout and exactly one line on stderr that names the flag,
// file, field or value at fault (the case's third field). The table covers every command and
// flag: missing, unreadable and garbage files, directories as files, wrong JSON fields,
// negative, NaN, infinite, huge and fractional values, unknown enum values and units.
func TestBadInputs(t *testing.T) {
	cases := loadBadInputs(t)
	require.Greater(t, len(cases), 200)
	work := t.TempDir()
	require.NoError(t, os.CopyFS(work, os.DirFS(filepath.Join("testdata", "bad"))))
	t.Chdir(work)
	names := map[string]int{}
	for _, c := range cases {
		if prev, dup := names[c.name]; dup {
			t.Errorf("bad-inputs.txt:%d: case %q already on line %d", c.line, c.name, prev)
		}
		names[c.name] = c.line
		code, stdout, stderr := run(t, c.args...)
		where := "bad-inputs.txt:" + strconv.Itoa(c.line) + ": " + c.name
		assert.Equal(t, 2, code, "%s: %q", where, stderr)
		assert.Empty(t, stdout, where)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%s: one line on stderr: %q", where, stderr)
		assert.True(t, strings.HasSuffix(stderr, "\n"), "%s: %q", where, stderr)
		assert.Contains(t, stderr, c.want, where)
	}
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, []string{"out", "m.mps", "m.xml", "m.gms"}, e.Name(), "a bad input wrote %s", e.Name())
	}
}

func TestShellWords(t *testing.T) {
	w, err := shellWords(` info --chain '' --mem "1 GiB"  x`)
	require.NoError(t, err)
	assert.Equal(t, []string{"info", "--chain", "", "--mem", "1 GiB", "x"}, w)
	_, err = shellWords(`'open`)
	assert.Error(t, err)
}
