package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpHasExamples: every command that does work — every leaf of the command tree, and gen
// — shows examples in its help, each starting with "memsched". (Bad flag values are the table
// of TestBadInputs.)
func TestHelpHasExamples(t *testing.T) {
	root := NewRootCmd(&IO{})
	var walk func(c *cobra.Command, path []string)
	checked := 0
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.Name() == "help" || sub.Name() == "completion" || sub.Name() == "version" {
				continue
			}
			p := append(append([]string{}, path...), sub.Name())
			walk(sub, p)
			if sub.HasAvailableSubCommands() && sub.Name() != "gen" {
				continue
			}
			code, out, _ := run(t, append([]string{"help"}, p...)...)
			require.Equal(t, 0, code, p)
			assert.Contains(t, out, "Examples:\n  memsched ", "memsched %s has no examples", strings.Join(p, " "))
			checked++
		}
	}
	walk(root, nil)
	assert.GreaterOrEqual(t, checked, 19, "every command and gen's eight generators")
	code, out, _ := run(t, "help")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "Examples:\n  memsched ")
}
