package report

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances/zoo"
	"github.com/memsched/memsched/verify"
)

// BenchmarkCertifyCombinedDenseNet201 is issue 31's speed target: certify's combined lever
// (rematerialization and offloading together) on DenseNet-201 (224×224, batch 32) at 10, 25,
// 50 and 75 % of the way from the smallest budget rematerialization fits to the store-all
// peak (sub-benchmarks pct=…), 12 GB/s,
// with the remat lever's report at hand (computed once, outside the timer) and a 10 s share.
// Metrics: the lever's wall time per run (ns/op), the bracket (best verified makespan over
// the best global bound, "ratio") and whether it closed ("proven", 0 or 1).
func BenchmarkCertifyCombinedDenseNet201(b *testing.B) {
	c, err := zoo.DenseNet(zoo.CNNConfig{Depth: 201, Image: 224, Batch: 32})
	if err != nil {
		b.Fatal(err)
	}
	sa, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	if err != nil {
		b.Fatal(err)
	}
	lo := verify.MinBudget(c)
	for _, pct := range []int64{10, 25, 50, 75} {
		b.Run(fmt.Sprintf("pct=%d", pct), func(b *testing.B) {
			benchCombined(b, Input{Chain: c, Source: "densenet201", Budget: lo + (sa.Peak-lo)*pct/100, Bandwidth: 12e9, TimeLimit: 60 * time.Second})
		})
	}
}

// benchCombined times RematOffload on in with a 10 s share, the remat lever's report computed
// first (outside the timer).
func benchCombined(b *testing.B, in Input) {
	ctx, cancel := context.WithTimeout(context.Background(), in.TimeLimit)
	rm, err := Remat{}.Run(ctx, in)
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	Summarize(&rm)
	in.Earlier = map[string]*LeverReport{"remat": &rm}
	in.TimeLimit = 10 * time.Second
	var ratio, proven float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), in.TimeLimit)
		lr, err := RematOffload{}.Run(ctx, in)
		cancel()
		if err != nil && ctx.Err() == nil {
			b.Fatal(err)
		}
		Summarize(&lr)
		if lr.BestBound > 0 {
			ratio = lr.BestAt / lr.BestBound
		}
		proven = 0
		if lr.Optimal {
			proven = 1
		}
	}
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(proven, "proven")
}
