package zoo

import (
	"fmt"

	"github.com/memsched/memsched/instances"
)

// The zoo's sizes are products of shape parameters (batch · channels · height · width · bytes,
// sequence² · batch · heads, …), which for large parameters do not fit an int64: unchecked, they
// wrapped to negative sizes (issue 18: gen zoo gpt2 --batch 1e9 --seq 1e9). Every size is
// computed with mul and add, which saturate at tooBig instead of wrapping, and each generator
// ends with checkSizes, which refuses a chain with a saturated size or a total above
// instances.MaxBytes, naming the parameters.

// tooBig marks a size that does not fit instances.MaxBytes.
const tooBig = instances.MaxBytes + 1

// mul returns Π xs, or tooBig when the product exceeds instances.MaxBytes.
func mul(xs ...int64) int64 {
	p, ok := instances.MulBytes(xs...)
	if !ok {
		return tooBig
	}
	return p
}

// add returns Σ xs, or tooBig when the sum exceeds instances.MaxBytes; the terms are results of
// mul or add (at most tooBig each), so the running sum cannot overflow.
func add(xs ...int64) int64 {
	var s int64
	for _, x := range xs {
		s = min(s+x, tooBig)
	}
	return s
}

// checkSizes refuses c when one of its sizes saturated or its sizes total more than
// instances.MaxBytes; params names the generator's parameters and their values (e.g. "gpt2
// seq 1000000000, batch 1000000000"), which are the `memsched gen zoo` flags.
func checkSizes(c *instances.Chain, params string) error {
	var total float64
	big := c.A0 >= tooBig || c.Delta0 >= tooBig
	total += float64(c.A0) + float64(c.Delta0)
	for _, s := range c.Stages {
		for _, v := range []int64{s.A, s.ABar, s.Delta, s.OF, s.OB, s.W} {
			big = big || v >= tooBig
			total += float64(v)
		}
	}
	switch {
	case big:
		return fmt.Errorf("zoo: %s: a tensor of this network is larger than 2^60 B (1 EiB), the most memsched computes with; choose smaller parameters", params)
	case total > float64(instances.MaxBytes):
		return fmt.Errorf("zoo: %s: the chain's sizes total %.3g B, above 2^60 B (1 EiB), the most memsched computes with; choose smaller parameters", params, total)
	}
	return c.Validate()
}
