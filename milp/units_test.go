package milp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChooseUnits(t *testing.T) {
	cases := []struct {
		name      string
		sizes     []int64
		times     []float64
		mem, time float64
	}{
		{"byte scale stays in bytes", []int64{1, 2, 3, 7}, []float64{1, 2, 3}, 2, 2},
		{"single bytes never below one", []int64{1, 1}, []float64{1e-6}, 1, math.Exp2(-20)},
		{"GiB scale", []int64{1 << 30, 3 << 30, 2 << 30}, []float64{0.01, 0.03}, 2 << 30, math.Exp2(-6)},
		{"zeros ignored", []int64{0, 0, 1 << 20}, []float64{0, 0.5}, 1 << 20, 0.5},
		{"the middle of a wide range, not its median", []int64{1 << 17, 1 << 30, 1 << 30, 3 << 30}, []float64{1e-3, 1, 1}, 1 << 24, math.Exp2(-5)},
		{"nothing positive", []int64{0}, nil, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := ChooseUnits(c.sizes, c.times)
			assert.Equal(t, c.mem, u.Memory)
			assert.Equal(t, c.time, u.Time)
		})
	}
	assert.Equal(t, "memsched units: memory=1048576 time=0.0009765625",
		Units{Memory: 1 << 20, Time: math.Exp2(-10)}.Comment())
}
