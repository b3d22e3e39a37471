package milptest

import (
	"bytes"

	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/lpfile"
	"github.com/memsched/memsched/model/mpsfile"
)

// LP is the round trip through memsched's CPLEX LP writer and reader (the model may come back
// with its columns in another order and ranged rows split in two; its optimum is the same).
var LP = RoundTrip{Name: "lp", Via: func(m *model.Model) (*model.Model, error) {
	var buf bytes.Buffer
	if err := lpfile.Write(&buf, m); err != nil {
		return nil, err
	}
	return lpfile.Read(&buf, "roundtrip.lp")
}}

// MPS is the round trip through memsched's free-MPS writer and reader.
var MPS = RoundTrip{Name: "mps", Via: func(m *model.Model) (*model.Model, error) {
	var buf bytes.Buffer
	if err := mpsfile.Write(&buf, m); err != nil {
		return nil, err
	}
	return mpsfile.Read(&buf, "roundtrip.mps")
}}
