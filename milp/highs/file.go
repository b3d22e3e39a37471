//go:build highs

package highs

import (
	"errors"
	"fmt"

	"github.com/memsched/memsched/model"
)

// ReadFile reads an LP or MPS file (by its extension) with HiGHS's own reader and returns it as
// a model, so that the files memsched writes can be checked against an independent parser.
// Columns are named c0, c1, … and rows r0, r1, …; integer columns become Integer.
func ReadFile(path string) (*model.Model, error) {
	h, err := newHandle()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := h.check("reading "+path, h.raw.ReadModelFromFile(path)); err != nil {
		return nil, err
	}
	lp, err := h.getLP()
	if err != nil {
		return nil, err
	}
	m := model.New(path)
	for j := range lp.cost {
		t := model.Continuous
		if lp.integer[j] {
			t = model.Integer
		}
		m.AddVar(fmt.Sprintf("c%d", j), t, lp.colLo[j], lp.colUp[j])
	}
	var e model.Expr
	for i := range lp.rowLo {
		e.Reset()
		for k := lp.start[i]; k < lp.start[i+1]; k++ {
			e.Add(model.Var(lp.index[k]), lp.value[k])
		}
		m.AddRow(fmt.Sprintf("r%d", i), lp.rowLo[i], e, lp.rowUp[i])
	}
	e.Reset()
	for j, c := range lp.cost {
		e.Add(model.Var(j), c)
	}
	e.Constant = lp.offset
	sense := model.Minimize
	if lp.maximize {
		sense = model.Maximize
	}
	m.SetObjective(sense, e)
	if err := m.Err(); err != nil {
		return nil, errors.Join(fmt.Errorf("highs: model read from %s is invalid", path), err)
	}
	return m, nil
}

// WriteFile writes m with HiGHS's own writer, in the format of path's extension (.mps or .lp),
// for external solvers that prefer HiGHS's dialect; names are HiGHS's (c0…, r0…), and
// m.Comments are not written.
func WriteFile(m *model.Model, path string) error {
	if err := m.Err(); err != nil {
		return err
	}
	h, err := newHandle()
	if err != nil {
		return err
	}
	defer h.Close()
	if err := pass(h, m); err != nil {
		return err
	}
	return h.check("writing "+path, h.raw.WriteModelToFile(path))
}
