package cli

import (
	"strings"
)

// helpEntry is one line of an algorithm list in a command's help: a name and what it does.
type helpEntry struct{ name, summary string }

// strategyHelp lays out entries as an indented two-column list, the summaries wrapped at 100
// columns under their own column, as the commands' help texts write their algorithms.
func strategyHelp(entries []helpEntry) string {
	width := 0
	for _, e := range entries {
		width = max(width, len([]rune(e.name)))
	}
	indent := 2 + width + 2
	var b strings.Builder
	for i, e := range entries {
		if i > 0 {
			b.WriteByte('\n')
		}
		line := "  " + e.name + strings.Repeat(" ", width-len([]rune(e.name))+2)
		col := indent
		for j, w := range strings.Fields(e.summary) {
			n := len([]rune(w))
			if j > 0 && col+1+n > 100 {
				b.WriteString(line)
				b.WriteByte('\n')
				line, col = strings.Repeat(" ", indent)+w, indent+n
				continue
			}
			if j > 0 {
				line += " "
				col++
			}
			line += w
			col += n
		}
		b.WriteString(line)
	}
	return b.String()
}
