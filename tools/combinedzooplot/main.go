// Command combinedzooplot draws the first of 003's claims as measured by report's
// TestCombinedZooClaims (its per-budget table, MEMSCHED_COMBINED_ZOO_OUT's -points.tsv): for
// each network, the share of rematerialization's overhead over Σu that the combined optimum
// removes, 1 − (T_comb − Σu)/(T_remat − Σu), against the budget as a fraction of the store-all
// peak — the DP's fluid value (solid) and the executed, strict schedule (dashed) — one panel
// per bandwidth, as one SVG (or PNG, by the output's extension).
//
//	go run ./tools/combinedzooplot docs/remat-offload-zoo-points.tsv docs/remat-offload-zoo.svg
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/memsched/memsched/report/plots"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: combinedzooplot POINTS.tsv OUT.svg")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "combinedzooplot:", err)
		os.Exit(1)
	}
}

// curve is one network's points at one bandwidth.
type curve struct {
	fluid, strict plotter.XYs
}

func read(path string) (betas []string, nets []string, data map[string]map[string]*curve, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	col := map[string]int{}
	seen := map[string]bool{}
	data = map[string]map[string]*curve{}
	for line := 1; sc.Scan(); line++ {
		cols := strings.Split(sc.Text(), "\t")
		if line == 1 {
			for k, h := range cols {
				col[h] = k
			}
			for _, h := range []string{"net", "beta_GBps", "budget_frac", "share_fluid", "share_strict"} {
				if _, ok := col[h]; !ok {
					return nil, nil, nil, fmt.Errorf("%s: no column %q", path, h)
				}
			}
			continue
		}
		if len(cols) != len(col) {
			return nil, nil, nil, fmt.Errorf("%s:%d: %d columns, want %d", path, line, len(cols), len(col))
		}
		num := func(h string) (float64, error) {
			v, err := strconv.ParseFloat(cols[col[h]], 64)
			if err != nil {
				return 0, fmt.Errorf("%s:%d: %s %q", path, line, h, cols[col[h]])
			}
			return v, nil
		}
		net, beta := cols[col["net"]], cols[col["beta_GBps"]]
		x, err1 := num("budget_frac")
		yf, err2 := num("share_fluid")
		ys, err3 := num("share_strict")
		for _, e := range []error{err1, err2, err3} {
			if e != nil {
				return nil, nil, nil, e
			}
		}
		if data[beta] == nil {
			data[beta] = map[string]*curve{}
			betas = append(betas, beta)
		}
		if data[beta][net] == nil {
			data[beta][net] = &curve{}
			if !seen[net] {
				seen[net] = true
				nets = append(nets, net)
			}
		}
		c := data[beta][net]
		c.fluid = append(c.fluid, plotter.XY{X: 100 * x, Y: yf})
		c.strict = append(c.strict, plotter.XY{X: 100 * x, Y: ys})
	}
	return betas, nets, data, sc.Err()
}

func run(in, out string) error {
	betas, nets, data, err := read(in)
	if err != nil {
		return err
	}
	var panels [][]*plot.Plot
	for _, beta := range betas {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("share of rematerialization's overhead removed by offloading too, β = %s GB/s", beta)
		p.X.Label.Text = "memory budget (% of the store-all peak)"
		p.Y.Label.Text = "1 − overhead(combined) / overhead(remat)"
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		p.Legend.Left = true
		p.Legend.TextStyle.Font.Size = 8
		for i, net := range nets {
			c := data[beta][net]
			if c == nil {
				continue
			}
			for _, s := range []plotter.XYs{c.fluid, c.strict} {
				sort.Slice(s, func(a, b int) bool { return s[a].X < s[b].X })
			}
			col := plotutil.Color(i)
			lf, sf, err := plotter.NewLinePoints(c.fluid)
			if err != nil {
				return err
			}
			lf.Color, sf.Color, sf.Shape = col, col, plotutil.Shape(i)
			ls, err := plotter.NewLine(c.strict)
			if err != nil {
				return err
			}
			ls.Color, ls.Dashes = col, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(lf, sf, ls)
			p.Legend.Add(net, lf, sf)
		}
		p.Y.Min = -0.2
		p.Y.Max = 1.75
		panels = append(panels, []*plot.Plot{p})
	}
	w, h := 8*vg.Inch, 5*vg.Inch*vg.Length(len(panels))
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(12)}
	return plots.SaveGrid(panels, tiles, w, h, out)
}
