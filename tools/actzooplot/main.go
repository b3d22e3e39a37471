// Command actzooplot draws the replica of 001 Fig. 5 from the table that dp's TestActZooReport
// writes (MEMSCHED_ACTZOO_OUT): for each network, the ratio of GREEDY, DYNPROG and VDNN to a
// lower bound against the memory (0 % = smallest feasible, 100 % = M_peak), as one SVG. Given
// the table of report's TestActZooTable (columns ratio_before, ratio_after), it draws instead
// the best verified schedule over the best certified bound before and after the exact MILP.
//
//	go run ./tools/actzooplot [-bound prop3|best] docs/act-offload-zoo.tsv out.svg
//	go run ./tools/actzooplot docs/act-milp-zoo.tsv out.svg
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image/color"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/memsched/memsched/report/plots"
)

func main() {
	bound := flag.String("bound", "prop3", "ratio to prop3 (001's yardstick) or best (the best certified bound)")
	flag.Parse()
	if flag.NArg() != 2 || (*bound != "prop3" && *bound != "best") {
		fmt.Fprintln(os.Stderr, "usage: actzooplot [-bound prop3|best] TABLE.tsv OUT.svg")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *bound); err != nil {
		fmt.Fprintln(os.Stderr, "actzooplot:", err)
		os.Exit(1)
	}
}

type series map[string]plotter.XYs // algorithm → (mem %, ratio)

func read(path, bound string) ([]string, map[string]series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var head []string
	var nets []string
	data := map[string]series{}
	for line := 1; sc.Scan(); line++ {
		cols := strings.Split(sc.Text(), "\t")
		if line == 1 {
			head = cols
			continue
		}
		if len(cols) != len(head) {
			return nil, nil, fmt.Errorf("%s:%d: %d columns, want %d", path, line, len(cols), len(head))
		}
		net := cols[0]
		if k := index(head, "ratio_before"); k >= 0 {
			// issue 21's table: before and after the exact MILP, by memory %.
			if data[net] == nil {
				data[net] = series{}
				nets = append(nets, net)
			}
			mem, err := strconv.ParseFloat(cols[2], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: pct %q", path, line, cols[2])
			}
			for _, name := range []string{"before", "after"} {
				v := cols[index(head, "ratio_"+name)]
				if v == "-" {
					continue
				}
				r, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return nil, nil, fmt.Errorf("%s:%d: ratio_%s %q", path, line, name, v)
				}
				data[net][name] = append(data[net][name], plotter.XY{X: mem, Y: r})
			}
			continue
		}
		if data[net] == nil {
			data[net] = series{}
			nets = append(nets, net)
		}
		mem, err := strconv.ParseFloat(cols[2], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: mem%% %q", path, line, cols[2])
		}
		for k, h := range head {
			alg, ok := strings.CutSuffix(h, "/"+bound)
			if !ok || cols[k] == "-" {
				continue
			}
			r, err := strconv.ParseFloat(cols[k], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %s %q", path, line, h, cols[k])
			}
			data[net][alg] = append(data[net][alg], plotter.XY{X: mem, Y: r})
		}
	}
	return nets, data, sc.Err()
}

func run(in, out, bound string) error {
	nets, data, err := read(in, bound)
	if err != nil {
		return err
	}
	colors := map[string]color.Color{
		"greedy":  color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		"dynprog": color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		"vdnn":    color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		"before":  color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
		"after":   color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	}
	algs, ylabel := []string{"greedy", "dynprog", "vdnn"}, "makespan / "+bound
	if len(nets) > 0 && data[nets[0]]["after"] != nil {
		algs, ylabel = []string{"before", "after"}, "best / best bound (before, after the MILP)"
	}
	const cols = 5
	rows := (len(nets) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, net := range nets {
		p := plot.New()
		p.Title.Text = net
		p.X.Label.Text = "memory (% from min to M_peak)"
		p.Y.Label.Text = ylabel
		p.Y.Min = 1
		for _, alg := range algs {
			xy := data[net][alg]
			if len(xy) == 0 {
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			l.Color = colors[alg]
			l.Width = vg.Points(1.2)
			p.Add(l)
			p.Legend.Add(alg, l)
		}
		p.Legend.Top = true
		grid[i/cols][i%cols] = p
	}
	w, h := vg.Length(cols)*3.2*vg.Inch, vg.Length(rows)*2.6*vg.Inch
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	return plots.SaveGrid(grid, tiles, w, h, out)
}

// index returns the position of name in head, -1 when absent.
func index(head []string, name string) int {
	for k, h := range head {
		if h == name {
			return k
		}
	}
	return -1
}
