package dp_test

import (
	"fmt"
	"testing"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/instances/zoo"
)

// BenchmarkCombinedSlots is the combined DP (pofo, restricted inner minimization) against the
// slot count on ResNet-101 (36 stages) and DenseNet-201 (105 stages), 224×224, batch 32, V100
// profile, β = 12 GB/s, at the budget 30 % of the way from the smallest feasible one to the
// store-all peak: time and allocations per run, and as metrics the makespan in the fluid model
// (ms; its convergence with the slots) and the states kept and created. docs/remat-offload.md
// records a run.
func BenchmarkCombinedSlots(b *testing.B) {
	for _, tc := range []struct {
		name   string
		chain  func() (*instances.Chain, error)
		budget int64
		slots  []int
	}{
		{"resnet101", func() (*instances.Chain, error) { return zoo.ResNet(zoo.CNNConfig{Depth: 101, Image: 224, Batch: 32}) },
			1730 << 20, []int{100, 200, 400, 800, 1600, 3200}},
		{"densenet201", func() (*instances.Chain, error) {
			return zoo.DenseNet(zoo.CNNConfig{Depth: 201, Image: 224, Batch: 32})
		},
			2326 << 20, []int{50, 100, 200, 400}},
	} {
		c, err := tc.chain()
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range tc.slots {
			b.Run(fmt.Sprintf("%s/slots=%d", tc.name, s), func(b *testing.B) {
				b.ReportAllocs()
				var r dp.CombinedResult
				for i := 0; i < b.N; i++ {
					if r, err = dp.Combined(c, tc.budget, 12e9, dp.CombinedOptions{Slots: s}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(r.Fluid.Makespan*1e3, "ms-fluid")
				b.ReportMetric(float64(r.States), "states")
				b.ReportMetric(float64(r.Created), "created")
			})
		}
	}
}
