package plots

import (
	"io"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// SaveGrid draws a grid of plots (nil cells left empty), aligned by tiles, on one canvas of
// w × h and writes it to file: PNG when its name ends in .png, SVG otherwise. The sweep's
// figures and the zoo tools' (tools/actzooplot, tools/combinedzooplot) are written by it.
func SaveGrid(grid [][]*plot.Plot, tiles draw.Tiles, w, h vg.Length, file string) error {
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	if strings.HasSuffix(file, ".png") {
		c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	} else {
		c = vgsvg.New(w, h)
	}
	canvases := plot.Align(grid, tiles, draw.New(c))
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
