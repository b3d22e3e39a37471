package model

import "fmt"

// ParseError is a malformed model file: the format's package ("lpfile", "mpsfile"), the source,
// the 1-based line and what is wrong.
type ParseError struct {
	Format string
	Source string
	Line   int
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: %s: line %d: %s", e.Format, e.Source, e.Line, e.Msg)
}
