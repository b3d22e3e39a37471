package model

import "errors"

// Validate returns the first bad-data error recorded while building m, or an error if m is
// empty (no variables). Solvers and writers call it before touching the model.
func (m *Model) Validate() error {
	if m.err != nil {
		return m.err
	}
	if len(m.varNames) == 0 {
		return errors.New("model: empty model (no variables)")
	}
	return nil
}
