// Package plots draws a budget sweep (report.SweepResult) with gonum.org/v1/plot: the ratio of
// each strategy's makespan to the best certified lower bound versus the memory budget (004
// Fig. 6's presentation), and the throughput (iterations per second, 1/makespan) versus the
// budget, with the bound's throughput as the ceiling no schedule can pass (001 Fig. 5's).
package plots

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/memsched/memsched/report"
)

// memUnit picks GiB or MiB for the budget axis.
func memUnit(budgets []int64) (float64, string) {
	top := int64(0)
	for _, b := range budgets {
		top = max(top, b)
	}
	if top >= 1<<30 {
		return 1 << 30, "GiB"
	}
	return 1 << 20, "MiB"
}

// series is one curve: a lever's strategy (or bound) over the budgets where it is defined.
type series struct {
	name string
	pts  plotter.XYs
}

// collect turns the points of one lever into curves with y = f(row, bound); rows that do not
// fit are gaps (left out).
func collect(res *report.SweepResult, lever string, scale float64, boundName string, y func(r report.Row, bound float64) float64, boundY func(bound float64) float64) []series {
	byName := map[string]*series{}
	var order []string
	add := func(name string, x, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		s, ok := byName[name]
		if !ok {
			s = &series{name: name}
			byName[name] = s
			order = append(order, name)
		}
		s.pts = append(s.pts, plotter.XY{X: x, Y: v})
	}
	for _, p := range res.Points {
		if p.Lever != lever {
			continue
		}
		x := float64(p.Budget) / scale
		if p.BestBound > 0 {
			add(boundName, x, boundY(p.BestBound))
		}
		for _, r := range p.Rows {
			if r.Feasible && p.BestBound > 0 {
				add(r.Strategy, x, y(r, p.BestBound))
			}
		}
	}
	out := make([]series, 0, len(order))
	for _, n := range order {
		s := byName[n]
		sort.Slice(s.pts, func(i, j int) bool { return s.pts[i].X < s.pts[j].X })
		out = append(out, *s)
	}
	return out
}

// Legend geometry: entries of legendFont, legendEntry apart.
const (
	legendFont  = vg.Length(9)
	legendEntry = vg.Length(11)
)

// height grows the figure with the legend so that the curves keep room.
func height(entries int) vg.Length {
	return 5*vg.Inch + vg.Length(max(0, entries-8))*1.6*legendEntry
}

// newPlot builds one plot from the curves; the bound curves are drawn black and dashed.
func newPlot(title, xlabel, ylabel string, curves []series, xmin, xmax float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.TextStyle.Font.Size = legendFont
	nbound := 0
	for i, s := range curves {
		if len(s.pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(s.pts)
		if err != nil {
			return nil, err
		}
		isBound := strings.Contains(s.name, "lower bound")
		if isBound { // black to grey, one dash pattern per lever
			g := uint8(min(160, 70*nbound))
			c := color.Gray{Y: g}
			l.Color, sc.Color = c, c
			l.Dashes = []vg.Length{vg.Points(5 + 2*float64(nbound)), vg.Points(3)}
			nbound++
			l.Width = vg.Points(1.5)
			sc.Shape = draw.CrossGlyph{}
		} else {
			c := plotutil.Color(i)
			l.Color, sc.Color = c, c
			sc.Shape = plotutil.Shape(i)
		}
		sc.Radius = vg.Points(2.5)
		p.Add(l, sc)
		p.Legend.Add(s.name, l, sc)
	}
	// Head room above the curves for the legend (it has no background): the fraction of the
	// plot's height its entries take.
	lo, hi := p.Y.Min, p.Y.Max
	if hi <= lo {
		hi = lo + 1
	}
	frac := math.Min(0.75, float64(len(curves))*legendEntry.Points()/(height(len(curves)).Points()-70))
	p.Y.Max = hi + (hi-lo)*frac/(1-frac)
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Tick.Marker = distinctTicks{}
	return p, nil
}

// distinctTicks are gonum's default ticks labelled with as many decimals as it takes for the
// labels to differ (the default's %g rounding labels 1.005 and 1 alike on a narrow axis).
type distinctTicks struct{}

// Ticks implements plot.Ticker.
func (distinctTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for d := 0; d <= 8; d++ {
		seen, ok := map[string]bool{}, true
		for i, t := range ticks {
			if t.Label == "" {
				continue
			}
			l := strconv.FormatFloat(t.Value, 'f', d, 64)
			ok = ok && !seen[l]
			seen[l] = true
			ticks[i].Label = l
		}
		if ok {
			break
		}
	}
	return ticks
}

// levers returns the levers of the sweep's points, in report order.
func levers(res *report.SweepResult) []string {
	seen := map[string]bool{}
	for _, p := range res.Points {
		seen[p.Lever] = true
	}
	var out []string
	for _, l := range report.LeverNames {
		if seen[l] {
			out = append(out, l)
		}
	}
	return out
}

// Write draws ratio.{svg,png} and throughput.{svg,png} into dir and returns their paths. Each
// figure has one panel per lever, stacked, on the same budget axis: the levers' strategies and
// bounds are different models, so their curves are never mixed in one panel.
func Write(res *report.SweepResult, dir string) ([]string, error) {
	scale, unit := memUnit(res.Budgets)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, b := range res.Budgets {
		xmin, xmax = math.Min(xmin, float64(b)/scale), math.Max(xmax, float64(b)/scale)
	}
	chain := res.Chain
	if strings.ContainsRune(chain, filepath.Separator) {
		chain = filepath.Base(chain)
	}
	xlabel := fmt.Sprintf("memory budget (%s)", unit)
	kinds := []struct {
		name, title, ylabel, bound string
		y                          func(r report.Row, bound float64) float64
		boundY                     func(bound float64) float64
	}{
		{"ratio", "makespan / best certified lower bound", "ratio to bound (1 = proven optimal)", "best lower bound",
			func(r report.Row, b float64) float64 { return r.Makespan / b }, func(float64) float64 { return 1 }},
		{"throughput", "throughput", "throughput (iterations/s)", "1 / best lower bound (ceiling)",
			func(r report.Row, _ float64) float64 { return 1 / r.Makespan }, func(b float64) float64 { return 1 / b }},
	}
	var files []string
	for _, k := range kinds {
		var panels [][]*plot.Plot
		entries := 0
		for _, lever := range levers(res) {
			curves := collect(res, lever, scale, k.bound, k.y, k.boundY)
			if len(curves) == 0 {
				continue
			}
			p, err := newPlot(fmt.Sprintf("%s — %s: %s", chain, lever, k.title), xlabel, k.ylabel, curves, xmin, xmax)
			if err != nil {
				return files, err
			}
			panels = append(panels, []*plot.Plot{p})
			entries = max(entries, len(curves))
		}
		if len(panels) == 0 {
			continue
		}
		w, h := 8*vg.Inch, height(entries)*vg.Length(len(panels))
		for _, ext := range []string{"svg", "png"} {
			f := filepath.Join(dir, k.name+"."+ext)
			if err := save(panels, w, h, f); err != nil {
				return files, fmt.Errorf("plots: %s: %w", f, err)
			}
			files = append(files, f)
		}
	}
	return files, nil
}

// save draws the panels stacked on one canvas of w × h and writes it (SaveGrid).
func save(panels [][]*plot.Plot, w, h vg.Length, file string) error {
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4)}
	return SaveGrid(panels, tiles, w, h, file)
}
