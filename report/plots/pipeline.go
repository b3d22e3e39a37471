package plots

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/memsched/memsched/report"
)

// WritePipeline draws pipeline-throughput.{svg,png} into dir: each strategy's throughput
// (micro-batches per second, m / makespan) against the number of GPUs, and m / the best
// certified lower bound as the ceiling no plan of the class passes. It returns the paths.
func WritePipeline(res *report.PipelineSweepResult, dir string) ([]string, error) {
	byName := map[string]*series{}
	var order []string
	add := func(name string, x, y float64) {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return
		}
		s, ok := byName[name]
		if !ok {
			s = &series{name: name}
			byName[name] = s
			order = append(order, name)
		}
		s.pts = append(s.pts, plotter.XY{X: x, Y: y})
	}
	m := float64(res.MicroBatches)
	const ceiling = "m / best lower bound (ceiling)"
	xmax := 1.0
	for _, p := range res.Points {
		x := float64(p.GPUs)
		xmax = max(xmax, x)
		if p.Bound > 0 {
			add(ceiling, x, m/p.Bound)
		}
		for _, r := range p.Rows {
			if r.Feasible {
				add(r.Algo, x, m/r.Makespan)
			}
		}
	}
	// The bound's name contains "lower bound" so that newPlot draws it black and dashed.
	curves := make([]series, 0, len(order))
	for _, n := range order {
		curves = append(curves, *byName[n])
	}
	chain := res.Chain
	if strings.ContainsRune(chain, filepath.Separator) {
		chain = filepath.Base(chain)
	}
	title := fmt.Sprintf("%s — pipeline (%s, m = %d): throughput", chain, res.Schedule, res.MicroBatches)
	p, err := newPlot(title, "GPUs (P)", "throughput (micro-batches/s)", curves, 0.5, xmax+0.5)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, ext := range []string{"svg", "png"} {
		f := filepath.Join(dir, "pipeline-throughput."+ext)
		if err := save([][]*plot.Plot{{p}}, 8*vg.Inch, height(len(curves)), f); err != nil {
			return files, fmt.Errorf("plots: %s: %w", f, err)
		}
		files = append(files, f)
	}
	return files, nil
}
