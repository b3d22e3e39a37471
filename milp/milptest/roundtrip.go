package milptest

import (
	"bytes"

	"github.com/memsched/memsched/model"
	"github.com/memsched/memsched/model/mpsfile"
)

// MPS is the round trip through memsched's free-MPS writer and reader.
var MPS = RoundTrip{Name: "mps", Via: func(m *model.Model) (*model.Model, error) {
	var buf bytes.Buffer
	if err := mpsfile.Write(&buf, m); err != nil {
		return nil, err
	}
	return mpsfile.Read(&buf, "roundtrip.mps")
}}
