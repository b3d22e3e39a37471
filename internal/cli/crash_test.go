package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

// TestPanicIsInternalError: a Go panic in a command is a bug: exit status 70 (EX_SOFTWARE) with
// "internal error" and the stack on stderr, never 2 (bad input) and never a dead process.
func TestPanicIsInternalError(t *testing.T) {
	root := &cobra.Command{Use: "memsched", SilenceErrors: true, SilenceUsage: true,
		RunE: func(*cobra.Command, []string) error { panic("dp: deliberate test panic") }}
	root.SetArgs(nil)
	var errOut bytes.Buffer
	code := execute(context.Background(), root, &errOut)
	assert.Equal(t, exitInternal, code)
	assert.NotEqual(t, exitUsage, code)
	first, _, _ := strings.Cut(errOut.String(), "\n")
	assert.Contains(t, first, "memsched: internal error")
	assert.Contains(t, first, "dp: deliberate test panic")
	assert.Contains(t, errOut.String(), "crash_test.go", "the stack names the panicking code")
}
